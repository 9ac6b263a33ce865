import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy } from '../../test/concierge-kit.js';
import { describeEachStore, type TestService, startService } from '../../test/harness.js';
import { agentInfo, DeploymentDirectory } from './deployment-context.js';

/** README, Security: a signature that fails against remembered secrets rechecks the store at most once a second per deployment. */
describeEachStore('the deployment directory', (kind) => {
  let service: TestService;
  let deploymentId: string;
  beforeAll(async () => {
    service = await startService(kind);
    ({ deploymentId } = await deploy(service, { hook_url: 'https://hotel.example/hook' }));
  });
  afterAll(() => service.close());

  /** A directory over the service's store that counts the statements it runs. */
  function counted(ttlMs: number) {
    const reads = { n: 0 };
    const counter: KyselyPlugin = {
      transformQuery: (args) => {
        reads.n++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    return { directory: new DeploymentDirectory(service.app.store.db.withPlugin(counter), { ttlMs }), reads };
  }

  it('reads a deployment once per second, however often a signature fails against it', async () => {
    const { directory, reads } = counted(400);
    for (let i = 0; i < 5; i++) expect((await directory.accepting(deploymentId, () => true))?.accepted).toBe(true);
    expect(reads.n).toBe(1);
    for (let i = 0; i < 50; i++) expect((await directory.accepting(deploymentId, () => false))?.accepted).toBe(false);
    // The first refusal may predate a rotation elsewhere: one recheck, then none until the second is up.
    expect(reads.n).toBe(2);
    await new Promise((r) => setTimeout(r, 450));
    for (let i = 0; i < 50; i++) await directory.accepting(deploymentId, () => false);
    expect(reads.n).toBeLessThanOrEqual(4);
  });

  it('remembers that a deployment does not exist, for a second too', async () => {
    const { directory, reads } = counted(1_000);
    for (let i = 0; i < 20; i++)
      expect(await directory.accepting('00000000-0000-4000-8000-000000000000', () => true)).toBeUndefined();
    expect(reads.n).toBe(1);
  });
});

describe('the agent the widget is told of', () => {
  it("reads the spec's voice as README's Field reference gives it, each field only with its type; a bare string names the voice", () => {
    const voiceOf = (voice: unknown) => agentInfo('Front desk', JSON.stringify({ voice })).voice;
    expect(voiceOf({ name: 'Samantha', rate: 1.1, pitch: 0.9 })).toEqual({ name: 'Samantha', rate: 1.1, pitch: 0.9 });
    expect(voiceOf({ rate: 1, pitch: 1, accent: 'posh' })).toEqual({ rate: 1, pitch: 1 });
    expect(voiceOf({ name: 7, rate: 'fast' })).toEqual({});
    expect(voiceOf('Samantha')).toEqual({ name: 'Samantha' });
    expect(voiceOf(null)).toBeNull();
    expect(agentInfo('Front desk', null)).toEqual({
      name: 'Front desk',
      greeting: null,
      language: 'en-US',
      voice: null,
    });
  });

  it("reads the spec's language as a BCP 47 tag in its canonical case, en-US when it has none or no valid one", () => {
    const languageOf = (language: unknown) => agentInfo('Front desk', JSON.stringify({ language })).language;
    expect(languageOf('fr-fr')).toBe('fr-FR');
    expect(languageOf('zh-hans-cn')).toBe('zh-Hans-CN');
    expect(languageOf('not a language')).toBe('en-US');
    expect(languageOf(7)).toBe('en-US');
    expect(languageOf(undefined)).toBe('en-US');
  });
});
