import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryStorage } from '../session/fake-browser';
import { greeter, type PageSignals, type ProactiveRule } from './greeter';

/** A page the test plays: its path, clock, visibility and scroll, and the events it fires. */
class FakePage implements PageSignals {
  at = '/';
  shown = true;
  depth = 10;
  on: { scroll(): void; visible(): void; exit(): void } | undefined;
  watching = 0;
  path = () => this.at;
  now = () => Date.now();
  visible = () => this.shown;
  scrolled = () => this.depth;
  watch(on: { scroll(): void; visible(): void; exit(): void }) {
    this.on = on;
    this.watching++;
    return () => void this.watching--;
  }
  scroll(to: number) {
    this.depth = to;
    this.on?.scroll();
  }
  hide(hidden: boolean) {
    this.shown = !hidden;
    this.on?.visible();
  }
  /** What makes the greeter look again without scrolling: the page seen again. */
  look() {
    this.on?.visible();
  }
}

const rule = (id: string, when: ProactiveRule['when'], more: Partial<ProactiveRule> = {}): ProactiveRule => ({
  id,
  when,
  teaser: `Hello from ${id}`,
  ...more,
});

describe('the greeter (README, Greeting visitors first)', () => {
  let page: FakePage;
  let session: MemoryStorage;
  let visitor: MemoryStorage;
  let shown: string[];
  let busy: boolean;
  const make = () =>
    greeter({
      page,
      deploymentId: 'dep-1',
      session,
      visitor,
      show: (r) => void shown.push(r.id),
      busy: () => busy,
    });

  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-11-27T10:00:00Z') });
    page = new FakePage();
    session = new MemoryStorage();
    visitor = new MemoryStorage();
    shown = [];
    busy = false;
  });
  afterEach(() => vi.useRealTimers());

  it('shows a rule once its page was visible long enough, counting visible time only, on one timer', () => {
    const g = make();
    g.start([rule('rooms', { path: '/rooms/*', seconds_on_page: 20 })]);
    page.at = '/rooms/deluxe';
    vi.advanceTimersByTime(1_000);
    page.look(); // the path changed: its time starts now
    vi.advanceTimersByTime(10_000);
    page.hide(true);
    vi.advanceTimersByTime(60_000); // a hidden tab does not count
    expect(shown).toEqual([]);
    page.hide(false);
    vi.advanceTimersByTime(9_999);
    expect(shown).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(shown).toEqual(['rooms']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('matches path globs whole, and waits on no timer for a page it does not match', () => {
    const g = make();
    page.at = '/rooms/deluxe/photos';
    g.start([rule('rooms', { path: '/rooms/*', seconds_on_page: 5 })]);
    vi.advanceTimersByTime(60_000);
    expect(shown).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('takes scroll depth, exit intent and page events as they come, all of a rule together', () => {
    const g = make();
    g.start([rule('deep', { scroll_percent: 75 }), rule('both', { event: 'basket', exit_intent: true })]);
    page.scroll(60);
    expect(shown).toEqual([]);
    page.scroll(80);
    expect(shown).toEqual(['deep']);
    g.trigger('basket');
    expect(shown).toEqual(['deep']);
    page.on!.exit();
    expect(shown).toEqual(['deep', 'both']);
  });

  it('keeps what the page did to the page: a new path starts over', () => {
    const g = make();
    g.start([rule('checkout', { path: '/pay', event: 'card_declined' })]);
    g.trigger('card_declined');
    page.at = '/pay';
    page.look();
    expect(shown).toEqual([]);
    g.trigger('card_declined');
    expect(shown).toEqual(['checkout']);
  });

  it('approaches nobody busy with the widget, and nobody who closed it in this visit', () => {
    const g = make();
    busy = true;
    g.start([rule('now', { seconds_on_page: 0 }), rule('later', { scroll_percent: 50 })]);
    expect(shown).toEqual([]);
    busy = false;
    page.scroll(20);
    // Scrolling that passes no rule's depth checks nothing.
    expect(shown).toEqual([]);
    page.look();
    expect(shown).toEqual(['now']);
    g.quiet();
    expect(page.watching).toBe(0);
    page.scroll(90);
    // A new page of the same visit (the widget starts again) stays quiet too.
    const next = make();
    next.start([rule('later', { scroll_percent: 50 })]);
    expect(shown).toEqual(['now']);
    // Nor does it watch that page at all.
    expect(page.watching).toBe(0);
  });

  it('shows a rule once per visitor by default, once per visit when asked, and no more than max_per_day a day', () => {
    const rules = [
      rule('visitor', { seconds_on_page: 0 }),
      rule('visit', { scroll_percent: 50 }, { once_per: 'session' }),
      rule('capped', { event: 'go' }, { once_per: 'session', max_per_day: 2 }),
    ];
    const visitFor = (scroll: boolean, go: boolean) => {
      session = new MemoryStorage();
      const g = make();
      g.start(rules);
      if (scroll) page.scroll(90);
      if (go) g.trigger('go');
      // Shown twice in one visit: never.
      if (go) g.trigger('go');
      g.stop();
      page.depth = 10;
    };
    visitFor(true, true);
    expect(shown).toEqual(['visitor', 'visit', 'capped']);
    visitFor(true, true);
    expect(shown.slice(3)).toEqual(['visit', 'capped']);
    visitFor(true, true);
    expect(shown.slice(5)).toEqual(['visit']);
    vi.setSystemTime(new Date('2026-11-28T09:00:00Z'));
    visitFor(false, true);
    expect(shown.slice(6)).toEqual(['capped']);
  });

  it('goes on without storage: nothing remembered, nothing thrown', () => {
    const broken = {
      getItem: () => {
        throw new Error('blocked');
      },
      setItem: () => {
        throw new Error('blocked');
      },
    } as unknown as Storage;
    session = visitor = broken as MemoryStorage;
    const g = make();
    g.start([rule('now', { seconds_on_page: 0 })]);
    expect(shown).toEqual(['now']);
  });
});
