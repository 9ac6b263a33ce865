import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface Provisioned {
  apiKey: string;
  agentId: string;
  deploymentId: string;
  signingSecret: string;
}

export interface DemoHooks {
  hookUrl: string;
  transcriptUrl: string;
  origin: string;
}

async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function expect2xx(call: Promise<{ status: number; body: any }>, what: string): Promise<any> {
  const res = await call;
  if (res.status < 200 || res.status > 299)
    throw new Error(`demo: ${what} answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const channel = (hooks: DemoHooks) => ({
  hook_url: hooks.hookUrl,
  transcript_hook_url: hooks.transcriptUrl,
  allowed_origins: [hooks.origin],
  // The language menu: the hotel answers in German, French and Spanish too (demo/answers.ts).
  widget: {
    title: 'Harbor Hotel',
    accent_color: '#0b6e4f',
    position: 'bottom-right',
    languages: ['en-US', 'de-DE', 'fr-FR', 'es-ES', 'ar-SA', 'he-IL'],
  },
});

/**
 * The demo customer's agent and deployment, through the management API like any customer.
 * Kept in `statePath` (the signing secret is shown once), and re-pointed at the demo's current
 * URLs on every start.
 */
export async function provision(
  serviceUrl: string,
  apiKey: string,
  hooks: DemoHooks,
  statePath: string | undefined,
): Promise<Provisioned> {
  const saved =
    statePath && existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as Provisioned) : undefined;
  if (saved && saved.apiKey === apiKey) {
    const found = await api(serviceUrl, apiKey, 'PUT', `/api/v1/deployments/${saved.deploymentId}`, {
      channel_config: channel(hooks),
    });
    if (found.status === 200) {
      await expect2xx(
        api(serviceUrl, apiKey, 'POST', `/api/v1/deployments/${saved.deploymentId}/activate`),
        'activate',
      );
      return saved;
    }
  }
  const created = await expect2xx(
    api(serviceUrl, apiKey, 'POST', '/api/v1/agents', {
      name: 'Harbor Hotel concierge',
      description: 'Answers guests of a small harbour hotel: breakfast, checkout, parking, spa.',
    }),
    'create agent',
  );
  for (let i = 0; ; i++) {
    const job = await expect2xx(api(serviceUrl, apiKey, 'GET', `/api/v1/jobs/${created.job_id}/status`), 'job status');
    if (job.status === 'succeeded') break;
    if (job.status === 'failed' || i > 300) throw new Error(`demo: agent generation ${job.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const agentId: string = created.agent_id;
  await expect2xx(api(serviceUrl, apiKey, 'POST', `/api/v1/agents/${agentId}/publish`), 'publish');
  const deployment = await expect2xx(
    api(serviceUrl, apiKey, 'POST', '/api/v1/deployments', {
      agent_id: agentId,
      channel_config: channel(hooks),
      runtime_config: { reply_timeout_s: 20, hook_timeout_ms: 3000 },
    }),
    'create deployment',
  );
  await expect2xx(api(serviceUrl, apiKey, 'POST', `/api/v1/deployments/${deployment.id}/activate`), 'activate');
  const result = { apiKey, agentId, deploymentId: deployment.id, signingSecret: deployment.signing_secret };
  if (statePath) writeFileSync(statePath, JSON.stringify(result, null, 2), { mode: 0o600 });
  return result;
}
