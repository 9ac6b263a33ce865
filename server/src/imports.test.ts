import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname);

/** Every non-test module of the server, and the modules of the server each imports (types included). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  );
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, false);
    const local = importedFiles
      .filter((i) => i.fileName.startsWith('.'))
      .map((i) => relative(root, resolve(root, dirname(file), i.fileName.replace(/\.js$/, '.ts'))));
    graph.set(file, local);
  }
  return graph;
}

/** The cycles of a directed graph: each strongly connected component of more than one node, or a node importing itself. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('the wire contract (protocol/, README: Layout)', () => {
  it('imports nothing but zod: the server, the widget and the console all build on it', () => {
    const dir = resolve(root, '../../protocol');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(files).toEqual([
      'close-codes.ts',
      'conversation-analysis.ts',
      'frames.ts',
      'guardrails.ts',
      'handoff.ts',
      'in-language.ts',
      'page-rules.ts',
      'privacy.ts',
      'proactive.ts',
      'pronunciations.ts',
      'roles.ts',
      'sentences.ts',
      'speech-settings.ts',
      'templates.ts',
      'text.ts',
      'tools.ts',
      'transcript-events.ts',
      'widget-locales.ts',
    ]);
    const imported = files.flatMap(
      (f) => ts.preProcessFile(readFileSync(join(dir, f), 'utf8'), true, false).importedFiles,
    );
    // One another's files aside.
    expect([...new Set(imported.map((i) => i.fileName).filter((name) => !name.startsWith('./')))]).toEqual(['zod']);
  });
});

describe("the server's imports", () => {
  const graph = importGraph();

  it('have no cycle between modules', () => {
    expect(graph.size).toBeGreaterThan(100);
    // The graph sees what a cycle is made of: a value import, and a type-only one.
    expect(graph.get('app.ts')).toContain('concierge/turns/turn.service.ts');
    expect(graph.get('concierge/sessions/event-cursor.ts')).toContain('concierge/sessions/session-socket.ts');
    expect(cycles(graph)).toEqual([]);
  });

  it('have no two top-level folders that import each other, nor any cycle between them (README, Layout)', () => {
    const top = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : undefined);
    const folders = new Map<string, string[]>();
    for (const [file, imports] of graph) {
      const from = top(file);
      if (!from) continue; // the root's files (app.ts, database.ts) compose the folders
      const to = imports.map(top).filter((d): d is string => d !== undefined && d !== from);
      folders.set(from, [...new Set([...(folders.get(from) ?? []), ...to])]);
    }
    expect(folders.size).toBeGreaterThan(10);
    // The graph sees the edges a folder's files make, value and type imports alike.
    expect(folders.get('console')).toEqual(expect.arrayContaining(['http', 'store', 'shared']));
    expect(folders.get('http')).not.toContain('api-keys');
    expect(cycles(folders)).toEqual([]);
  });

  it("have no cycle between the session backend's folders (README, Layout): each imports only those below it", () => {
    const folders = new Map<string, string[]>();
    for (const [file, imports] of graph) {
      const from = dirname(file);
      if (!from.startsWith('concierge')) continue;
      const to = imports.map(dirname).filter((d) => d !== from && d.startsWith('concierge'));
      folders.set(from, [...new Set([...(folders.get(from) ?? []), ...to])]);
    }
    expect([...folders.keys()].sort()).toEqual([
      'concierge',
      'concierge/activity',
      'concierge/analysis',
      'concierge/analytics',
      'concierge/conversations',
      'concierge/deliveries',
      'concierge/diagnostics',
      'concierge/events',
      'concierge/history',
      'concierge/knowledge',
      'concierge/models',
      'concierge/pages',
      'concierge/privacy',
      'concierge/quality',
      'concierge/sessions',
      'concierge/speech',
      'concierge/turns',
    ]);
    expect(cycles(folders)).toEqual([]);
    // A conversation's read side (list, search, detail, export) is built on its write core, never the reverse.
    expect(folders.get('concierge/history')).toContain('concierge/conversations');
    expect(folders.get('concierge/conversations')).not.toContain('concierge/history');
  });
});

describe('who writes what (README, Layout)', () => {
  const graph = importGraph();

  it("leaves a turn's moves to the turn core: no responder reaches the turn lifecycle, even through another module", () => {
    const responders = [...graph.keys()].filter((f) =>
      /^concierge\/(turns|models|knowledge)\/.*responder\.ts$/.test(f),
    );
    expect(responders.sort()).toEqual([
      'concierge/knowledge/knowledge-responder.ts',
      'concierge/models/model-responder.ts',
      'concierge/turns/hook-responder.ts',
      'concierge/turns/responder.ts',
    ]);
    // Everything a responder reaches, through its helpers and their types alike.
    const reached = new Set<string>(responders);
    for (const file of reached) for (const to of graph.get(file) ?? []) reached.add(to);
    expect(reached).toContain('concierge/turns/answering.ts');
    expect(reached).toContain('concierge/conversations/turn.repository.ts'); // the turn's row, as a type
    expect(reached).not.toContain('concierge/turns/turn-answering.ts');
    expect(reached).not.toContain('concierge/conversations/turn.lifecycle.ts');
  });

  it('keeps SQL apart from transport: no repository imports http/', () => {
    const repositories = [...graph.keys()].filter((f) => f.endsWith('.repository.ts'));
    expect(repositories.length).toBeGreaterThan(20);
    expect(repositories.filter((f) => graph.get(f)!.some((to) => to.startsWith('http/')))).toEqual([]);
  });

  it('writes console users in one module', () => {
    const writers = [...graph.keys()].filter(
      (f) =>
        !f.startsWith('store/migrations/') &&
        /(insertInto|updateTable|deleteFrom)\('console_users'\)/.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(writers).toEqual(['console/console-account.repository.ts']);
  });
});

describe("the session backend's files", () => {
  it('are each at most 300 lines: a part that grows past it is split by what it does', () => {
    const dir = join(root, 'concierge');
    const long = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => ({ f, lines: readFileSync(join(dir, f), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 301);
    expect(long).toEqual([]);
  });
});
