import { afterAll, beforeAll, expect, it } from 'vitest';
import { deploy, mintToken, postReply, startCustomerServer, Widget } from '../test/concierge-kit.js';
import { type FuzzTarget, randomFrame, randomRequest, rawRequest, Rng } from '../test/fuzz-input.js';
import { describeEachStore, rawExchange, type TestService, startService } from '../test/harness.js';

/** FUZZ_SEED=n replays a run; the seed is in every failure message. */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const HTTP_REQUESTS = 6_000;
const WS_FRAMES = 4_000;
const CONCURRENCY = 16;

describeEachStore('fuzzing the edges', (kind) => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  let target: FuzzTarget;

  beforeAll(async () => {
    service = await startService(kind);
    customer = await startCustomerServer();
    const { api, apiKey, deploymentId, secret } = await deploy(
      service,
      { hook_url: customer.hookUrl },
      { engagement_rules: { turns_per_minute: 600, max_pending_turns: 50 } },
    );
    const deployment = (await api.get(`/api/v1/deployments/${deploymentId}`)).body.data;
    const jobId = (await api.get(`/api/v1/agents/${deployment.agent_id}/generation-status`)).body.data.job_id;
    const widget = await Widget.open(service, deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(secret, deploymentId));
    widget.send({ type: 'user_turn', client_turn_id: 'seed', text: 'Hello', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    widget.close();
    target = {
      apiKey,
      agentId: deployment.agent_id,
      deploymentId,
      jobId,
      secret,
      conversationId: conversation_id,
      turnId: turn_id,
    };
  });
  afterAll(async () => {
    await service.close();
    await customer.close();
  });

  it(`answers ${HTTP_REQUESTS + WS_FRAMES} malformed requests and frames without a 5xx or a 1011, then serves a turn`, async () => {
    const rng = new Rng(SEED + (kind === 'postgres' ? 1 : 0));
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    const note = (status: number | undefined, what: string) => {
      if (status === undefined) return;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500) problems.push(`${status} for ${what}`);
    };

    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < HTTP_REQUESTS) {
          next++;
          if (rng.chance(0.15)) {
            const { bytes, hangUp } = rawRequest(rng, target);
            // A request that waits for a body never sent is cut by us after 500 ms: the aborted-body case.
            const { status } = await rawExchange(service.url, bytes, { hangUp, waitMs: 500 });
            note(status, `raw ${JSON.stringify(bytes.subarray(0, 120).toString())}`);
            continue;
          }
          const request = randomRequest(rng, target);
          const what = `${request.method} ${request.path.slice(0, 120)} ${request.body?.slice(0, 120) ?? ''}`;
          try {
            const res = await fetch(service.url + request.path, {
              method: request.method,
              headers: request.headers,
              body: request.body,
              signal: AbortSignal.timeout(10_000),
            });
            await res.arrayBuffer();
            note(res.status, what);
          } catch (err) {
            // The server may close a connection it refused (413, bad framing); a request left hanging is a failure.
            if ((err as Error).name === 'TimeoutError') problems.push(`no answer in 10 s to ${what}`);
          }
        }
      }),
    );

    const closes = new Map<number, number>();
    let frames = 0;
    while (frames < WS_FRAMES) {
      const widget = await Widget.open(service, target.deploymentId);
      widget.ws.on('error', () => {});
      const closed = widget.closed.then(({ code }) => {
        closes.set(code, (closes.get(code) ?? 0) + 1);
        if (code === 1011 || code === 1006) problems.push(`close ${code} after frame ${frames}`);
      });
      // Half the sockets get their frames after a proper hello, half before.
      if (rng.chance(0.5))
        await widget.hello(await mintToken(target.secret, target.deploymentId, { sub: `fuzz-${rng.int(1_000)}` }));
      const burst = 1 + rng.int(60);
      for (let i = 0; i < burst && frames < WS_FRAMES && widget.ws.readyState === widget.ws.OPEN; i++, frames++)
        widget.send(await randomFrame(rng, target));
      await Promise.race([closed, new Promise((r) => setTimeout(r, 30))]);
      widget.close();
      await closed;
    }

    expect(
      problems,
      `seed ${rng.seed} (FUZZ_SEED=${SEED} replays it); statuses ${JSON.stringify([...statuses])}`,
    ).toEqual([]);
    const errors = service.logs.filter((line) => /"level":(50|60)/.test(line));
    expect(errors, `seed ${rng.seed}: error-level log lines`).toEqual([]);
    // Most input is refused, but some of it must have been taken for the run to mean anything.
    expect(statuses.get(400)).toBeGreaterThan(500);
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
    expect(closes.get(4400)).toBeGreaterThan(10);

    // Afterwards, a visitor's turn works end to end.
    const fresh = await deploy(service, { hook_url: customer.hookUrl });
    const widget = await Widget.open(service, fresh.deploymentId);
    const ready = await widget.hello(await mintToken(fresh.secret, fresh.deploymentId));
    widget.send({ type: 'user_turn', client_turn_id: 'after', text: 'Still there?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    expect(
      (
        await postReply(
          service,
          fresh.deploymentId,
          { conversation_id: ready.conversation_id, turn_id, reply_text: 'Yes.' },
          fresh.secret,
        )
      ).status,
    ).toBe(202);
    expect(await widget.next('reply')).toMatchObject({ turn_id, text: 'Yes.' });
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    widget.close();
  }, 60_000);
});
