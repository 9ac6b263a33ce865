import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type TestService, startService } from '../test/harness.js';
import { toOpenApiPath } from './openapi.js';

describe('GET /openapi.json', () => {
  let service: TestService;
  let doc: any;
  beforeAll(async () => {
    service = await startService('sqlite');
    const res = await call(service.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.body;
  });
  afterAll(() => service.close());

  it('is a valid OpenAPI 3.1 document of contract version 2026-10-02', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2026-10-02');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every route the app serves, and nothing it does not', async () => {
    const served = service.app.served
      .map((route) =>
        route.replace(/^(\w+) (.*)$/, (_, method: string, path: string) => `${method} ${toOpenApiPath(path)}`),
      )
      .sort();
    const documented = Object.entries(doc.paths as Record<string, object>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
      .sort();
    expect(documented).toEqual(served);
    // And each documented operation really is routed: asked with a key and made-up ids, none
    // meets the "No such route" 404 that an unknown path gets.
    const { apiKey } = await service.newCustomer();
    const headers = { authorization: `Bearer ${apiKey}` };
    expect((await call(service.url, 'GET', '/api/v1/nothing-here', { headers })).body.error.message).toBe(
      'No such route',
    );
    for (const operation of documented) {
      const [method, path] = operation.split(' ') as [string, string];
      if (path === '/api/v1/activity') {
        // An endless event stream: its status is the answer.
        const stop = new AbortController();
        expect((await fetch(`${service.url}${path}`, { headers, signal: stop.signal })).status, operation).toBe(200);
        stop.abort();
        continue;
      }
      const res = await call(
        service.url,
        method.toUpperCase(),
        path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
        { headers },
      );
      expect(res.body?.error?.message, operation).not.toBe('No such route');
    }
    expect(served).toHaveLength(93);
    expect(Object.keys(doc.paths['/widget/concierge.js'].get.responses['200'].content)).toEqual([
      'text/javascript; charset=utf-8',
    ]);
    expect(Object.keys(doc.paths['/widget/locales/{locale}.json'].get.responses['200'].content)).toEqual([
      'application/json; charset=utf-8',
    ]);
    expect(Object.keys(doc.paths['/api/v1/conversations/export'].get.responses['200'].content)).toEqual([
      'application/x-ndjson',
    ]);
    // A document is JSON, or a file as a form's upload.
    const addDocument = doc.paths['/api/v1/knowledge-bases/{id}/documents'].post.requestBody.content;
    expect(Object.keys(addDocument)).toEqual(['application/json', 'multipart/form-data']);
    expect(addDocument['multipart/form-data'].schema.properties.file).toMatchObject({
      type: 'string',
      format: 'binary',
    });
  });

  it('describes request schemas, success envelopes and error responses', () => {
    const list = doc.paths['/api/v1/agents'].get;
    const params = Object.fromEntries(
      list.parameters.map((p: { name: string; in: string; schema: object }) => [p.name, p]),
    );
    expect(params.per_page).toMatchObject({
      in: 'query',
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    });
    expect(params.page.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(params.status.schema.enum).toEqual(['generating', 'draft', 'published', 'failed']);
    expect(Object.keys(list.responses).sort()).toEqual(['200', '400', '401', '403', '429', '500', '503']);
    expect(list.responses['503'].headers['Retry-After']).toBeDefined();
    expect(list.security).toEqual([{ apiKey: [] }, { consoleSession: [] }]);

    const create = doc.paths['/api/v1/agents'].post;
    expect(Object.keys(create.responses).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    const idempotencyKey = create.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    expect(idempotencyKey).toMatchObject({ in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255 } });
    expect(idempotencyKey.required).not.toBe(true);
    expect(create.responses['202'].headers['Idempotent-Replayed']).toBeDefined();
    expect(create.responses['202'].headers.Location).toBeDefined();
    expect(create.requestBody.required).toBe(true);

    // The agent spec the service checks on publish is described, not a bare object.
    const spec = doc.components.schemas.AgentSpecDocument;
    expect(Object.keys(spec.properties)).toEqual([
      'greeting',
      'language',
      'persona',
      'instructions',
      'voice',
      'pronunciations',
      'responder',
      'guardrails',
      'analysis',
      'evaluation',
      'require_tests',
    ]);
    expect(spec.properties.responder.oneOf.map((r: any) => r.properties.type.const)).toEqual([
      'knowledge',
      'hook',
      'model',
    ]);
    expect(doc.components.schemas.Agent.properties.agent_spec.anyOf[0]).toEqual({
      $ref: '#/components/schemas/AgentSpecDocument',
    });

    const rotate = doc.paths['/api/v1/settings/api-key/rotate'].post;
    // A destructive action takes an explicit body: a bare POST does nothing.
    expect(rotate.requestBody.required).toBe(true);
    expect(Object.keys(doc.paths['/api/v1/deployments/{id}/activate'].post.responses)).toContain('409');
    expect(doc.paths['/api/v1/deployments'].post.responses['201']).toBeDefined();

    const schemas = doc.components.schemas;
    for (const name of [
      'Agent',
      'Deployment',
      'CreatedDeployment',
      'Job',
      'JobAccepted',
      'PageMeta',
      'Error',
      'ApiKeySettings',
      'RotatedApiKey',
      'Usage',
      'Conversation',
      'ConversationDetail',
      'ConversationTurn',
      'Delivery',
    ]) {
      expect(schemas[name], name).toBeDefined();
    }
    expect(schemas.Error.properties.error.properties.code.enum).toContain('invalid_state');
    expect(schemas.Agent.required).toEqual(expect.arrayContaining(['id', 'name', 'status']));
    expect(schemas.CreateAgent.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(schemas.CreateAgent.additionalProperties).toBe(false);
    expect(schemas.Delivery.properties.kind.enum).toEqual(['turn_hook', 'transcript', 'test', 'model', 'tool']);
    // Nullable, and the six documented reasons: "deleted", a person's "closed" and a model's "agent_ended" included.
    expect(schemas.Conversation.properties.end_reason).toEqual({
      anyOf: [
        {
          type: 'string',
          enum: ['user_ended', 'deployment_inactive', 'max_turns', 'deleted', 'closed', 'agent_ended'],
        },
        { type: 'null' },
      ],
    });
    expect(Object.keys(doc.paths['/api/v1/deployments/{id}/test-hook'].post.responses)).toEqual(
      expect.arrayContaining(['200', '404', '409', '429']),
    );
    expect(Object.keys(doc.paths['/api/v1/deliveries/{id}/redeliver'].post.responses)).toEqual(
      expect.arrayContaining(['200', '404', '409', '429']),
    );
    expect(Object.keys(doc.paths['/api/v1/conversations/export'].get.responses)).toContain('429');
    expect(Object.keys(doc.paths['/console/welcome'].post.responses)).toContain('429');
    expect(Object.keys(doc.paths['/api/v1/deployments/{id}/transcript-hook/enable'].post.responses)).toEqual(
      expect.arrayContaining(['200', '404', '409']),
    );
    expect(doc.components.schemas.Deployment.required).toEqual(
      expect.arrayContaining([
        'transcript_hook_status',
        'transcript_hook_disabled_at',
        'transcript_hook_disabled_reason',
      ]),
    );
    expect(doc.components.securitySchemes.apiKey).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
  });
});
