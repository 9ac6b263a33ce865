import { Agent } from 'node:http';
import { patternKinds } from '../../protocol/privacy.js';
import { redact } from '../../server/src/concierge/privacy/detectors.js';
import { type Spread, spread } from '../stats.js';
import { api, BenchSocket, type Deployed, type HookCall, replyTo } from './kit.js';
import { startConcierge } from './service.js';

/** Calls of the detectors timed; turns a block, blocks (every word kept, then redacted, twice, then the other way round). */
export const PRIVACY = { calls: 20_000, warmUp: 2_000, turnsPerBlock: 100, blocks: 8 } as const;

/** Two visitor turns of 200 characters: one without a value, one with a phone number, an email and a card. */
const TURNS = {
  plain:
    'Hello, we arrive on the 28th around 10:30 with two children and a dog, room 412 if possible; is breakfast served until 11 on Sundays, and can we park the car in the garage overnight? Thanks a lot!'.slice(
      0,
      200,
    ),
  valued:
    'Hi, please book the garden room for 2 on Friday at 19:30, call me on +44 7911 123456 or mail jane.doe@example.com; pay with card 4111 1111 1111 1111, order 20261128. Many thanks, Jane Doe'.padEnd(
      200,
      '.',
    ),
};
const REPLY = 'Booked for Friday at 19:30. We will call +44 7911 123456 to confirm and mail jane.doe@example.com.';

/** The detectors' time on one 200-character turn, every kind on, µs per call, by turn. */
export function detectorFigures(): Record<keyof typeof TURNS, Spread> {
  const out = {} as Record<keyof typeof TURNS, Spread>;
  for (const [name, text] of Object.entries(TURNS) as [keyof typeof TURNS, string][]) {
    // Each call its own text, as each turn is: the same one again would be faster than any visitor's.
    const turn = (i: number) => `${text.slice(0, 190)} turn ${i}`;
    for (let i = 0; i < PRIVACY.warmUp; i++) redact(turn(i), patternKinds, 'GB');
    const times: number[] = [];
    for (let i = 0; i < PRIVACY.calls; i++) {
      const said = turn(PRIVACY.warmUp + i);
      const started = performance.now();
      redact(said, patternKinds, 'GB');
      times.push((performance.now() - started) * 1000);
    }
    out[name] = spread(times);
  }
  return out;
}

/**
 * A visitor's turn with values to its deferred reply with values, on the widget socket, with every
 * word kept and with them redacted, in blocks taken in turn on the same service (ms).
 */
export async function replyLatencyFigures(): Promise<{ kept: Spread; redacted: Spread }> {
  const agent = new Agent({ keepAlive: true });
  // Every turn and reply its own text, as visitors' are: nothing is redacted twice for the bench's sake.
  // A kept-alive connection the service closed meanwhile is reset: the reply is sent once more.
  let replies = 0;
  const reply = (call: HookCall, dep: Deployed) => {
    const text = `${REPLY} Reply ${++replies}.`;
    void replyTo(agent, dep.secret, call, text)
      .catch(() => replyTo(agent, dep.secret, call, text))
      .catch((err: Error) => console.error(`reply not sent: ${err.message}`));
  };
  const concierge = await startConcierge(reply);
  const url = concierge.nodes[0]!.url;
  const times = { kept: [] as number[], redacted: [] as number[] };
  try {
    for (let block = 0; block < PRIVACY.blocks; block++) {
      // Everything, redacted, redacted, everything, ...: a store slowing as it grows weighs on both alike.
      const keep = [0, 3].includes(block % 4) ? 'everything' : 'redacted';
      await api(url, concierge.apiKey, 'PUT', `/api/v1/deployments/${concierge.dep.deploymentId}`, {
        runtime_config: { reply_timeout_s: 3600, hook_timeout_ms: 15_000, privacy: { keep } },
      });
      // Settings are cached for a second.
      await new Promise((r) => setTimeout(r, 1_100));
      const socket = await BenchSocket.session(url, concierge.dep, `guest-${block}`);
      for (let i = 0; i < PRIVACY.turnsPerBlock + 10; i++) {
        const asked = performance.now();
        await socket.request(
          {
            type: 'user_turn',
            client_turn_id: `t-${i}`,
            text: `${TURNS.valued.slice(0, 190)} turn ${block}.${i}`,
            mode: 'text',
          },
          (f) => f.type === 'reply',
        );
        // The first turns of a conversation warm it up.
        if (i >= 10) times[keep === 'everything' ? 'kept' : 'redacted'].push(performance.now() - asked);
      }
      socket.close();
    }
  } finally {
    agent.destroy();
    await concierge.stop();
  }
  return { kept: spread(times.kept), redacted: spread(times.redacted) };
}
