import { Agent } from 'node:http';
import { join, resolve } from 'node:path';
import { quantile } from './stats.js';
import { type Concierge, startConcierge } from './concierge/service.js';
import { prepareTurns, timedReply, WARM_UP, MEASURED, type AwaitingTurn } from './concierge/replies.js';

/**
 * `tsx bench/compare-builds.ts BUILD_A BUILD_B`: two builds of the service side by side, each a copy
 * of `dist/` inside this checkout (where its packages resolve, e.g. `.builds/before`), each on a
 * store of its own with the same turns prepared, their replies taken in turns (which goes first
 * alternates). A change worth a few percent of a reply is lost in the drift between two runs of
 * `npm run bench -- replies` on a shared machine; taken in turns, both meet the same drift.
 * Swap the two and run again: the second-named build has measured up to 3% faster in an A/A run.
 */
const builds = process.argv.slice(2);
if (builds.length !== 2) throw new Error('usage: tsx bench/compare-builds.ts BUILD_A BUILD_B');

const sides: { build: string; concierge: Concierge; turns: AwaitingTurn[]; samples: number[]; agent: Agent }[] = [];
try {
  for (const build of builds) {
    const concierge = await startConcierge(() => {}, { entry: join(resolve(build), 'server/src/main.js') });
    const turns = await prepareTurns(concierge.nodes[0]!.url, concierge.dep, WARM_UP + MEASURED);
    sides.push({ build, concierge, turns, samples: [], agent: new Agent({ keepAlive: true, maxSockets: 1 }) });
  }
  for (let i = 0; i < WARM_UP + MEASURED; i++)
    for (const side of i % 2 ? sides : [...sides].reverse())
      side.samples.push(await timedReply(side.agent, side.concierge.nodes[0]!.url, side.concierge.dep, side.turns[i]!));
  for (const { build, samples } of sides) {
    const measured = samples.slice(WARM_UP).map((ms) => ms * 1000);
    const fifths = Array.from({ length: 5 }, (_, f) =>
      quantile(measured.slice((f * measured.length) / 5, ((f + 1) * measured.length) / 5), 0.5).toFixed(0),
    );
    console.log(
      `${build}: reply p50 ${quantile(measured, 0.5).toFixed(0)} µs, p99 ${quantile(measured, 0.99).toFixed(0)} µs; p50 by fifth of the run: ${fifths.join(' ')}`,
    );
  }
} finally {
  for (const side of sides) {
    side.agent.destroy();
    await side.concierge.stop();
  }
}
