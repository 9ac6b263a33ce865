import { Agent } from 'node:http';
import { complete, type ModelCall, startModelServer } from '../../server/test/model-server.js';
import { cpuSeconds } from '../process.js';
import { type Spread, spread } from '../stats.js';
import { api, BenchSocket, type Deployed, type HookCall, replyTo } from './kit.js';
import { startConcierge } from './service.js';

/** Tests a run holds, runs measured; conversations analysed; turns timed with and without analysis running. */
export const QUALITY = { tests: 20, runs: 5, analysed: 1_000, turns: 100 } as const;
const TURN_EVERY_MS = 150;

/** The hotel's guide the knowledge agent answers from: one section a question. */
export const SECTIONS = [
  ['Breakfast', 'Breakfast is served from 7 to 10 in the garden room.', 'When is breakfast?', 'garden room'],
  ['Checkout', 'Checkout is at 11; a late checkout until 2 costs 30 euros.', 'When is checkout?', '11'],
  ['Parking', 'Parking is in the garage under the hotel, 25 euros a night.', 'Where can I park?', 'garage'],
  ['Spa', 'The spa on the top floor opens at 9 and closes at 21.', 'When does the spa open?', 'top floor'],
  ['Pool', 'The indoor pool is heated to 28 degrees.', 'How warm is the pool?', '28 degrees'],
  ['Wifi', 'The wifi network is HarborGuest, its password is on your key card.', 'What is the wifi?', 'HarborGuest'],
  ['Pets', 'Dogs are welcome for 15 euros a night.', 'Can I bring my dog?', '15 euros'],
  [
    'Airport',
    'The airport shuttle leaves every hour from the front door.',
    'Is there an airport shuttle?',
    'every hour',
  ],
  ['Gym', 'The gym in the basement is open around the clock.', 'When is the gym open?', 'around the clock'],
  ['Laundry', 'Laundry handed in before 9 comes back the same evening.', 'Do you do laundry?', 'same evening'],
  ['Restaurant', 'The restaurant by the water serves dinner from 6 to 10.', 'When is dinner?', 'by the water'],
  ['Bar', 'The rooftop bar opens at 5 with a view of the harbour.', 'When does the bar open?', 'rooftop'],
  ['Bikes', 'Bikes can be borrowed at the front desk for free.', 'Can I borrow a bike?', 'for free'],
  ['Safe', 'Every room has a safe in the wardrobe.', 'Is there a safe?', 'wardrobe'],
  ['Towels', 'Beach towels are at the pool desk.', 'Where are beach towels?', 'pool desk'],
  ['Children', 'Children under 6 stay for free in their parents room.', 'Do children pay?', 'under 6'],
  ['Smoking', 'Smoking is allowed on the terrace only.', 'Where can I smoke?', 'terrace'],
  [
    'Luggage',
    'Luggage can be left at the concierge desk after checkout.',
    'Where can I leave luggage?',
    'concierge desk',
  ],
  ['Taxi', 'The front desk books taxis around the clock.', 'Can you book a taxi?', 'books taxis'],
  ['Ironing', 'An iron and board are in every wardrobe.', 'Is there an iron?', 'iron and board'],
] as const;

export interface TestRunFigures {
  /** Wall time of a whole run of the tests, ms, over the runs measured. */
  run: Spread;
  /** The same questions asked by a widget socket each, one after another (the baseline), ms. */
  sockets: Spread;
  passed: number;
}

/** An agent answering from a knowledge base of {@link SECTIONS} (no model, no server), deployed and live. */
export async function guideDeployment(url: string, key: string): Promise<{ agentId: string; dep: Deployed }> {
  const base = await api(url, key, 'POST', '/api/v1/knowledge-bases', { name: 'Guest guide' });
  await api(url, key, 'POST', `/api/v1/knowledge-bases/${base.id}/documents`, {
    title: 'Guest guide',
    text: SECTIONS.map(([title, text]) => `## ${title}\n\n${text}`).join('\n\n'),
  });
  const job = await api(url, key, 'POST', '/api/v1/agents', { name: 'Guide desk' });
  while ((await api(url, key, 'GET', job.polling_url)).status !== 'succeeded')
    await new Promise((r) => setTimeout(r, 20));
  await api(url, key, 'PUT', `/api/v1/agents/${job.agent_id}`, {
    knowledge_base_id: base.id,
    draft_spec: { language: 'en-US', responder: { type: 'knowledge' } },
  });
  await api(url, key, 'POST', `/api/v1/agents/${job.agent_id}/publish`);
  const deployment = await api(url, key, 'POST', '/api/v1/deployments', {
    agent_id: job.agent_id,
    channel_config: {},
    engagement_rules: { max_pending_turns: 50, turns_per_minute: 600, max_turns_per_conversation: 10_000 },
  });
  await api(url, key, 'POST', `/api/v1/deployments/${deployment.id}/activate`);
  return { agentId: job.agent_id, dep: { deploymentId: deployment.id, secret: deployment.signing_secret } };
}

/**
 * `npm run bench -- quality`: a run of {@link QUALITY.tests} scripted tests against an agent that
 * answers from its knowledge base (no model anywhere), through the real turn pipeline, against the
 * baseline of the same questions asked by widget sockets, one after another, in the same run.
 */
export async function testRunFigures(): Promise<TestRunFigures> {
  const concierge = await startConcierge(() => {});
  try {
    const url = concierge.nodes[0]!.url;
    const key = concierge.apiKey;
    const { agentId, dep } = await guideDeployment(url, key);
    for (const [title, , question, answer] of SECTIONS)
      await api(url, key, 'POST', `/api/v1/agents/${agentId}/tests`, {
        name: title,
        turns: [{ visitor: question }],
        expect: [{ type: 'contains', text: answer }],
      });
    const runs: number[] = [];
    const sockets: number[] = [];
    let passed = 0;
    // One of each first, unmeasured: the service's first search and first run warm up.
    for (let round = -1; round < QUALITY.runs; round++) {
      const began = performance.now();
      const run = await api(url, key, 'POST', `/api/v1/agents/${agentId}/tests/run`, {});
      const took = performance.now() - began;
      const asked = performance.now();
      for (const [i, [, , question]] of SECTIONS.entries()) {
        const socket = await BenchSocket.session(url, dep, `visitor-${round}-${i}`);
        await socket.request(
          { type: 'user_turn', client_turn_id: `q-${i}`, text: question, mode: 'text' },
          (f) => f.type === 'reply' || f.type === 'turn_failed',
        );
        socket.ws.close();
      }
      if (round < 0) continue;
      runs.push(took);
      sockets.push(performance.now() - asked);
      passed = run.passed;
    }
    return { run: spread(runs), sockets: spread(sockets), passed };
  } finally {
    await concierge.stop();
  }
}

export interface AnalysisFigures {
  analysed: number;
  /**
   * From the model let go to the last analysis stored, ms; and the service's CPU over it a
   * conversation, the turns asked meanwhile (at their idle cost) taken out, ms.
   */
  wallMs: number;
  cpuMsPerConversation: number;
  /** The model's own time a conversation (it answers at once), as its server measured it. */
  modelMsPerConversation: number;
  /** A turn's reply latency (hook answered at once) before analysis and while it runs, ms. */
  idleTurns: Spread;
  busyTurns: Spread;
}

const ANALYSED = JSON.stringify({
  summary: 'The guest asked when breakfast is, and was told.',
  fields: { topic: 'breakfast' },
  criteria: { answered: { result: 'success', reason: 'The question was answered.' } },
});

/**
 * `npm run bench -- quality`: {@link QUALITY.analysed} ended conversations analysed with a model
 * answering at once. The model holds its first answers until every conversation has ended, so the
 * analysis runs alone: the service's CPU per conversation over it, and the latency of turns asked
 * meanwhile against the same turns asked before.
 */
export async function analysisFigures(): Promise<AnalysisFigures> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let modelMs = 0;
  const model = await startModelServer((call: ModelCall, res) => {
    void released.then(() => {
      const began = performance.now();
      complete(res, call.body.model, ANALYSED);
      modelMs += performance.now() - began;
    });
  });
  const agent = new Agent({ keepAlive: true });
  const concierge = await startConcierge(
    (call: HookCall, dep) => void replyTo(agent, dep.secret, call, 'Breakfast is from 7 in the garden room.'),
  );
  try {
    const url = concierge.nodes[0]!.url;
    const key = concierge.apiKey;
    const { agent_id } = await api(url, key, 'GET', `/api/v1/deployments/${concierge.dep.deploymentId}`);
    const endpoint = await api(url, key, 'POST', '/api/v1/model-endpoints', {
      name: 'Analyst',
      base_url: model.baseUrl,
    });
    await api(url, key, 'PUT', `/api/v1/agents/${agent_id}`, {
      draft_spec: {
        evaluation: { endpoint_id: endpoint.id, model: 'analyst' },
        analysis: {
          summary: true,
          fields: [{ name: 'topic', type: 'string', description: 'What the guest asked about' }],
          criteria: [{ id: 'answered', description: 'The question was answered' }],
        },
      },
    });
    await api(url, key, 'POST', `/api/v1/agents/${agent_id}/publish`);
    // A visitor asking every 150 ms (within the conversation's 600 turns a minute), each turn timed.
    const turnsOn = async (socket: BenchSocket, count: number, tag: string) => {
      const took: number[] = [];
      for (let i = 0; i < count; i++) {
        const began = performance.now();
        const answer = await socket.request(
          { type: 'user_turn', client_turn_id: `${tag}-${i}`, text: 'When is breakfast?', mode: 'text' },
          (f) => f.type === 'reply' || f.type === 'error',
        );
        if (answer.type === 'error') throw new Error(`a timed turn was refused: ${JSON.stringify(answer)}`);
        took.push(performance.now() - began);
        await new Promise((r) => setTimeout(r, Math.max(0, TURN_EVERY_MS - (performance.now() - began))));
      }
      return took;
    };
    const timed = await BenchSocket.session(url, concierge.dep, 'timed-visitor');
    const pid = concierge.nodes[0]!.child.pid!;
    const idleCpu = cpuSeconds(pid);
    const idle = await turnsOn(timed, QUALITY.turns, 'idle');
    // A turn's own CPU, taken out of the analysis window's below (turns are asked throughout it).
    const cpuMsPerTurn = ((cpuSeconds(pid) - idleCpu) * 1000) / QUALITY.turns;
    for (let i = 0; i < QUALITY.analysed; i++) {
      const socket = await BenchSocket.session(url, concierge.dep, `guest-${i}`);
      await socket.request(
        { type: 'user_turn', client_turn_id: 'c1', text: 'When is breakfast?', mode: 'text' },
        (f) => f.type === 'reply',
      );
      await socket.request({ type: 'end' }, (f) => f.type === 'conversation_ended');
      socket.ws.close();
    }
    const cpuBefore = cpuSeconds(pid);
    const began = performance.now();
    release();
    const busy: number[] = [];
    let analysed = 0;
    while (analysed < QUALITY.analysed) {
      busy.push(...(await turnsOn(timed, 5, `busy-${busy.length}`)));
      const res = await fetch(`${url}/api/v1/conversations?criterion=answered:success&per_page=1`, {
        headers: { authorization: `Bearer ${key}` },
      });
      analysed = ((await res.json()) as { meta: { total_count: number } }).meta.total_count;
      if (performance.now() - began > 300_000) throw new Error(`only ${analysed} analysed in 5 minutes`);
    }
    const wallMs = performance.now() - began;
    const cpuMs = (cpuSeconds(pid) - cpuBefore) * 1000 - busy.length * cpuMsPerTurn;
    timed.ws.close();
    return {
      analysed,
      wallMs,
      cpuMsPerConversation: cpuMs / analysed,
      modelMsPerConversation: modelMs / model.calls.length,
      idleTurns: spread(idle.slice(10)),
      busyTurns: spread(busy),
    };
  } finally {
    release();
    await concierge.stop();
    await model.close();
    agent.destroy();
  }
}
