import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIR } from './server/src/console/console-static.js';
import { WIDGET_BUNDLE, WIDGET_DIST } from './server/src/widget.route.js';

const gzipped = (file: string): number => gzipSync(readFileSync(file), { level: 9 }).length;

/** A build's modules as its manifest lists them. */
type Manifest = Record<
  string,
  { file: string; isEntry?: boolean; imports?: string[]; dynamicImports?: string[]; assets?: string[] }
>;

/** One build (the widget's, the console's): which files load when, read from its manifest. */
function build(dist: string) {
  const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8')) as Manifest;
  const loaded = new Set<string>();
  /** The files a module brings with it: itself, what it imports and the files it fetches (a worklet), less what is loaded already. */
  const filesOf = (key: string): string[] => {
    const { file, imports = [], assets = [] } = manifest[key]!;
    if (loaded.has(file)) return [];
    loaded.add(file);
    return [file, ...assets, ...imports.flatMap(filesOf)];
  };
  const entry = Object.keys(manifest).find((key) => manifest[key]!.isEntry)!;
  return {
    /** What the page loads before anything is asked of it. */
    first: filesOf(entry),
    /** The modules the page fetches when they are needed. */
    lazy: manifest[entry]!.dynamicImports ?? [],
    /** What `keys` add after what is loaded already. */
    later: (keys: readonly string[]) => keys.flatMap(filesOf),
    gzipped: (files: string[]) => files.reduce((total, file) => total + gzipped(join(dist, file)), 0),
  };
}

const widget = build(WIDGET_DIST);
/** The agent's voice, fetched with the first sentence it says (README, The agent's own voice). */
const PLAYER = 'src/speech/player.ts';
const onEveryPage = widget.first;
const onOpening = widget.later(widget.lazy.filter((key) => key !== PLAYER));
const onFirstVoice = widget.later([PLAYER]);
/** The hands-free mic with its capture and worklet, fetched with the first press (README, Hands-free voice). */
const onFirstPress = widget.later(['src/speech/hands-free.ts', 'src/speech/pcm-worklet.js']);
const console_ = build(CONSOLE_DIR);
const consoleFirst = console_.first.filter((file) => file.endsWith('.js'));
const consoleCharts = console_.later(console_.lazy).filter((file) => file.endsWith('.js'));

/**
 * Budgets, Preact included: what every host page loads of the widget (the script tag's file and
 * the modules it imports) within 15.1 KB gzip (14.1 before the greeting rules of README, Greeting
 * visitors first: they may add 1 KB); what opening the widget adds within 10 KB; what
 * its first spoken sentence adds (the player and its worklet) within 4 KB; the hands-free mic (its
 * capture and worklet) on its first press within 4 KB; the JavaScript of the
 * console's first page within 60 KB (it must be interactive at once), and its charts, fetched with
 * the first chart (Analytics), within 25 KB.
 */
const budgets = [
  { name: 'widget, on every page', bytes: gzipped(WIDGET_BUNDLE) + widget.gzipped(onEveryPage), limit: 15.1 * 1024 },
  { name: 'widget, once opened', bytes: widget.gzipped(onOpening), limit: 10 * 1024 },
  { name: 'widget, on its first spoken sentence', bytes: widget.gzipped(onFirstVoice), limit: 4 * 1024 },
  { name: 'widget, on the first press of a hands-free mic', bytes: widget.gzipped(onFirstPress), limit: 4 * 1024 },
  { name: 'console JavaScript, its first page', bytes: console_.gzipped(consoleFirst), limit: 60 * 1024 },
  { name: 'console JavaScript, its charts', bytes: console_.gzipped(consoleCharts), limit: 25 * 1024 },
];
let over = false;
for (const { name, bytes, limit } of budgets) {
  const line = `${name}: ${(bytes / 1024).toFixed(2)} KB gzip (limit ${limit / 1024} KB)`;
  if (bytes > limit) over = true;
  (bytes > limit ? process.stderr : process.stdout).write(`${line}${bytes > limit ? ': TOO LARGE' : ''}\n`);
}
if (over) process.exit(1);
