import { pathGlob, type PathMatcher } from '#protocol/page-rules';
import type { ProactiveRule } from '#protocol/proactive';
import { store, stored } from '../session/memory';

export type { ProactiveRule };

/** What the greeter reads of the page: where it is, for how long it was seen, how far it was scrolled. */
export interface PageSignals {
  path(): string;
  now(): number;
  visible(): boolean;
  /** How far down the page the visitor sees, in percent (100 on a page that does not scroll). */
  scrolled(): number;
  /** Calls back on scrolling, on visibility changes, and when the pointer leaves the window's top (desktop only); returns a stop. */
  watch(on: { scroll(): void; visible(): void; exit(): void }): () => void;
}

export interface GreeterOptions {
  page: PageSignals;
  /** The deployment: what is remembered is its own. */
  deploymentId: string;
  /** This visit (sessionStorage) and this visitor (localStorage). */
  session: Storage | undefined;
  visitor: Storage | undefined;
  /** A rule holds: its teaser is shown (or the panel opened) and counted. */
  show(rule: ProactiveRule): void;
  /** Whether the visitor is busy with the widget already (the panel or a teaser open, a turn asked): nobody is approached then. */
  busy(): boolean;
}

/** This visit: whether the visitor closed the widget or a teaser, and the rules already shown. */
interface VisitMarks {
  quiet?: 1;
  shown: string[];
}
/** This visitor: per rule, the UTC day it was last shown and how often that day. */
type VisitorMarks = Record<string, [string, number]>;

/** The greeter of a page: its rules from `ready`, the page's events, the visitor closing the widget. */
export interface Greeter {
  /** The deployment's rules, as `ready` gave them: evaluated from now on. */
  start(rules: ProactiveRule[]): void;
  /** The page's event (`Concierge.trigger`): rules waiting for it may hold. */
  trigger(name: string): void;
  /** The visitor closed the widget or a teaser: nobody approaches them again in this visit. */
  quiet(): void;
  stop(): void;
}

/**
 * Greeting visitors first (README, Greeting visitors first): the deployment's rules evaluated on
 * the page. A rule holds when all its conditions do on the page the visitor is on (the page's
 * visible seconds, its deepest scroll, an exit intent and the page's events, all counted afresh
 * when the path changes). It waits on one timer set for the next rule's seconds, never a loop, and
 * approaches nobody busy with the widget, or who closed it or a teaser in this visit. A closure,
 * not a class: every page carries it, and its names minify.
 */
export function greeter(o: GreeterOptions): Greeter {
  const { page, session, visitor } = o;
  const key = `concierge:${o.deploymentId}:greeted`;
  /** Each rule, and its path as an expression (once, not per check). */
  let rules: [ProactiveRule, PathMatcher | undefined][] = [];
  // The page's time counts from the widget's start, before the rules arrive.
  let path = page.path();
  let visibleMs = 0;
  /** When the page was last seen visible while counting; undefined while hidden. */
  let since = page.visible() ? page.now() : undefined;
  let scroll = 0;
  /** The rules' scroll depths: scrolling past the deepest reads nothing more. */
  let depths: number[] = [];
  let exit = false;
  const events = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unwatch: (() => void) | undefined;
  const visit = () => stored<VisitMarks>(session, key, { shown: [] });

  const check = (): void => {
    const now = page.now();
    if (page.path() !== path) {
      path = page.path();
      visibleMs = scroll = 0;
      since = undefined;
      exit = false;
      events.clear();
    }
    if (since !== undefined) visibleMs += now - since;
    since = page.visible() ? now : undefined;
    scroll = Math.max(scroll, page.scrolled());
    clearTimeout(timer);
    const marks = visit();
    if (marks.quiet || o.busy()) return;
    const today = new Date(now).toISOString().slice(0, 10);
    const seen = stored<VisitorMarks>(visitor, key, {});
    let wait = Infinity;
    for (const [rule, pathMatch] of rules) {
      const { when } = rule;
      const [day, times] = seen[rule.id] ?? ['', 0];
      if (
        marks.shown.includes(rule.id) ||
        (rule.once_per !== 'session' && day) ||
        (day === today && times >= (rule.max_per_day ?? Infinity)) ||
        (pathMatch && !pathMatch.test(path))
      )
        continue;
      const left = (when.seconds_on_page ?? 0) * 1000 - visibleMs;
      if (left > 0) {
        if (since !== undefined) wait = Math.min(wait, left);
      } else if (
        scroll >= (when.scroll_percent ?? 0) &&
        (!when.exit_intent || exit) &&
        (!when.event || events.has(when.event))
      ) {
        store(session, key, { ...marks, shown: [...marks.shown, rule.id] });
        store(visitor, key, { ...seen, [rule.id]: [today, day === today ? times + 1 : 1] });
        return o.show(rule);
      }
    }
    if (wait < Infinity) timer = setTimeout(check, wait);
  };
  const stop = () => {
    clearTimeout(timer);
    unwatch?.();
    unwatch = undefined;
  };
  return {
    start(given) {
      rules = given.map((rule) => [rule, rule.when.path === undefined ? undefined : pathGlob(rule.when.path)]);
      depths = given.map((rule) => rule.when.scroll_percent ?? 0);
      // Nothing to watch without rules, or for a visitor who said no in this visit (a reconnect starts it again).
      if (!rules.length || visit().quiet) return;
      unwatch ??= page.watch({
        // Scrolling costs a read of the depth; the rules are checked only when it passes a rule's.
        scroll() {
          const before = scroll;
          if (!depths.some((depth) => depth > before)) return;
          scroll = Math.max(scroll, page.scrolled());
          if (depths.some((depth) => depth > before && depth <= scroll)) check();
        },
        visible: check,
        exit() {
          exit = true;
          check();
        },
      });
      check();
    },
    trigger(name) {
      events.add(name);
      check();
    },
    quiet() {
      store(session, key, { ...visit(), quiet: 1 });
      stop();
    },
    stop,
  };
}

/** The browser's page as the greeter reads it. */
export function browserPage(win: Window = window): PageSignals {
  const doc = win.document;
  return {
    path: () => win.location.pathname,
    now: () => Date.now(),
    visible: () => doc.visibilityState === 'visible',
    scrolled: () => {
      const height = doc.documentElement.scrollHeight;
      return height <= win.innerHeight ? 100 : ((win.scrollY + win.innerHeight) / height) * 100;
    },
    watch({ scroll, visible, exit }) {
      // Leaving through the top of the window, towards the tabs and the address bar: desktop pointers only.
      const out = (e: MouseEvent) => !e.relatedTarget && e.clientY <= 0 && exit();
      const desktop = win.matchMedia('(pointer: fine)').matches;
      // A scroll is read a quarter of a second after it starts, the listener away meanwhile: a
      // visitor scrolling at 60 frames a second costs the page four calls a second, not sixty.
      let later: ReturnType<typeof setTimeout> | undefined;
      const scrolling = () => {
        win.removeEventListener('scroll', scrolling);
        later = setTimeout(() => {
          scroll();
          win.addEventListener('scroll', scrolling, { passive: true });
        }, 250);
      };
      win.addEventListener('scroll', scrolling, { passive: true });
      doc.addEventListener('visibilitychange', visible);
      if (desktop) doc.addEventListener('mouseout', out);
      return () => {
        clearTimeout(later);
        win.removeEventListener('scroll', scrolling);
        doc.removeEventListener('visibilitychange', visible);
        doc.removeEventListener('mouseout', out);
      };
    },
  };
}
