import { readFileSync } from 'node:fs';

/**
 * `tsx bench/profile-summary.ts FILE.cpuprofile [N]`: where a V8 CPU profile's time went, as
 * self time per function and per package (or project file), the top N of each. Used to name the
 * top costs of a hot path before and after a change.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx bench/profile-summary.ts FILE.cpuprofile [N]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  startTime: number;
  endTime: number;
};
const hits = new Map<number, number>();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
const total = profile.samples.length;

/** `node_modules/kysely/...` → `kysely`; a project file stays a path; Node's own and V8's are grouped. */
function placeOf(url: string): string {
  if (!url) return '(native / V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node: core';
  const project = /\/(server|bench|demo|dist)\/(.*)$/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}

const byFunction = new Map<string, number>();
const byPlace = new Map<string, number>();
for (const node of profile.nodes) {
  const n = hits.get(node.id) ?? 0;
  if (!n) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const place = placeOf(url);
  const name = `${functionName || '(anonymous)'}  ${place}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + n);
  byPlace.set(place, (byPlace.get(place) ?? 0) + n);
}

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, n] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`);
};
console.log(`${file}: ${total} samples over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s`);
print('self time by place', byPlace);
print('self time by function', byFunction);
