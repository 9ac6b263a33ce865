import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ActivityMessage, onActivity } from './activity';

/** The browser's EventSource as far as the console uses it: opened, told messages, failing, refused for good. */
class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static made: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  readonly named = new Map<string, (m: { data: string }) => void>();
  closed = false;

  constructor(readonly url: string) {
    FakeEventSource.made.push(this);
  }
  addEventListener(name: string, handler: (m: { data: string }) => void): void {
    this.named.set(name, handler);
  }
  close(): void {
    this.closed = true;
    this.readyState = FakeEventSource.CLOSED;
  }
  open(): void {
    this.readyState = FakeEventSource.OPEN;
    this.onopen?.();
  }
  /** A drop the browser resumes itself (it stays CONNECTING), or a refusal (CLOSED). */
  fail(refused: boolean): void {
    this.readyState = refused ? FakeEventSource.CLOSED : FakeEventSource.CONNECTING;
    this.onerror?.();
  }
}

const latest = () => FakeEventSource.made[FakeEventSource.made.length - 1]!;

describe("the console's activity stream", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeEventSource.made = [];
    vi.stubGlobal('EventSource', FakeEventSource);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('shares one stream between listeners, and closes it when the last one leaves', () => {
    const got: ActivityMessage[] = [];
    const offA = onActivity((m) => got.push(m));
    const offB = onActivity(() => {});
    expect(FakeEventSource.made).toHaveLength(1);
    expect(latest().url).toBe('/api/v1/activity');
    latest().open();
    latest().named.get('handoff')!({ data: '{"conversation_id":"c","handler":"person"}' });
    expect(got).toEqual([{ kind: 'handoff', handoff: { conversation_id: 'c', handler: 'person' } }]);
    offA();
    expect(latest().closed).toBe(false);
    offB();
    expect(latest().closed).toBe(true);
  });

  it('leaves a dropped stream to the browser, opens a refused one anew with a growing wait, and says to read again once it is back', () => {
    const got: ActivityMessage[] = [];
    const off = onActivity((m) => got.push(m));
    latest().open();
    latest().fail(false);
    vi.advanceTimersByTime(60_000);
    expect(FakeEventSource.made).toHaveLength(1);

    // Refused (the store down: 503): the browser gives up, the console does not.
    latest().fail(true);
    vi.advanceTimersByTime(1_999);
    expect(FakeEventSource.made).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.made).toHaveLength(2);
    latest().fail(true);
    vi.advanceTimersByTime(3_999);
    expect(FakeEventSource.made).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.made).toHaveLength(3);
    expect(got).toEqual([]);
    latest().open();
    expect(got).toEqual([{ kind: 'resync' }]);
    latest().onmessage!({ data: '{"conversation_id":"c","event":{"type":"greeting","seq":1,"text":"Hi"}}' });
    expect(got[1]).toEqual({
      kind: 'event',
      activity: { conversation_id: 'c', event: { type: 'greeting', seq: 1, text: 'Hi' } },
    });

    // Nobody listening any more: no stream, and no retry left waiting.
    latest().fail(true);
    off();
    vi.advanceTimersByTime(120_000);
    expect(FakeEventSource.made).toHaveLength(3);
  });
});
