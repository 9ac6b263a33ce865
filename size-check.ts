import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIR } from './server/src/console/console-static.js';
import { WIDGET_BUNDLE, WIDGET_DIST } from './server/src/widget.route.js';

const gzipped = (file: string): number => gzipSync(readFileSync(file), { level: 9 }).length;

/** The widget's modules as its build's manifest lists them. */
type Manifest = Record<
  string,
  { file: string; isEntry?: boolean; imports?: string[]; dynamicImports?: string[]; assets?: string[] }
>;
const manifest = JSON.parse(readFileSync(join(WIDGET_DIST, '.vite', 'manifest.json'), 'utf8')) as Manifest;

/** The files a module brings with it: itself, what it imports and the files it fetches (a worklet), less what is loaded already. */
function filesOf(key: string, loaded: Set<string>): string[] {
  const { file, imports = [], assets = [] } = manifest[key]!;
  if (loaded.has(file)) return [];
  loaded.add(file);
  return [file, ...assets, ...imports.flatMap((i) => filesOf(i, loaded))];
}
const entry = Object.keys(manifest).find((key) => manifest[key]!.isEntry)!;
const loaded = new Set<string>();
const onEveryPage = filesOf(entry, loaded);
/** The agent's voice, fetched with the first sentence it says (README, The agent's own voice). */
const PLAYER = 'src/speech/player.ts';
const onOpening = (manifest[entry]!.dynamicImports ?? [])
  .filter((key) => key !== PLAYER)
  .flatMap((key) => filesOf(key, loaded));
const onFirstVoice = filesOf(PLAYER, loaded);
const sum = (files: string[]) => files.reduce((total, file) => total + gzipped(join(WIDGET_DIST, file)), 0);

/**
 * Budgets, Preact included: what every host page loads of the widget (the script tag's file and
 * the modules it imports) within 15.1 KB gzip (14.1 before the greeting rules of README, Greeting
 * visitors first: they may add 1 KB); what opening the widget adds within 10 KB; what
 * its first spoken sentence adds (the player and its worklet) within 4 KB; the console's
 * JavaScript within 60 KB (its first page must be interactive at once).
 */
const budgets = [
  { name: 'widget, on every page', bytes: gzipped(WIDGET_BUNDLE) + sum(onEveryPage), limit: 15.1 * 1024 },
  { name: 'widget, once opened', bytes: sum(onOpening), limit: 10 * 1024 },
  { name: 'widget, on its first spoken sentence', bytes: sum(onFirstVoice), limit: 4 * 1024 },
  {
    name: 'console JavaScript',
    bytes: readdirSync(join(CONSOLE_DIR, 'assets'))
      .filter((f) => f.endsWith('.js'))
      .reduce((total, f) => total + gzipped(join(CONSOLE_DIR, 'assets', f)), 0),
    limit: 60 * 1024,
  },
];
let over = false;
for (const { name, bytes, limit } of budgets) {
  const line = `${name}: ${(bytes / 1024).toFixed(2)} KB gzip (limit ${limit / 1024} KB)`;
  if (bytes > limit) over = true;
  (bytes > limit ? process.stderr : process.stdout).write(`${line}${bytes > limit ? ': TOO LARGE' : ''}\n`);
}
if (over) process.exit(1);
