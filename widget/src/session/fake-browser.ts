import type { Socket, Surroundings } from './connection';

/* The browser's parts the session uses, played by tests: sockets, network events, sessionStorage. */

/** A socket whose far end the test plays: it opens, answers and dies only when told to. */
export class FakeSocket implements Socket {
  readyState = 0;
  readonly sent: Record<string, unknown>[] = [];
  /** Binary frames: audio for the service's recogniser. */
  readonly audio: ArrayBuffer[] = [];
  closedByWidget: number | undefined;
  /** A live far end answers each ping. */
  answersPings = false;
  onopen: Socket['onopen'] = null;
  onmessage: Socket['onmessage'] = null;
  onclose: Socket['onclose'] = null;

  constructor(readonly url: string) {}

  send(data: string | ArrayBuffer): void {
    if (this.readyState !== 1) throw new Error('sent on a socket that is not open');
    if (data instanceof ArrayBuffer) return void this.audio.push(data);
    const frame = JSON.parse(data) as Record<string, unknown>;
    this.sent.push(frame);
    if (frame.type === 'ping' && this.answersPings) queueMicrotask(() => this.receive({ type: 'pong' }));
  }

  /** Like a browser on a dead connection: closing starts, but no close event ever arrives. */
  close(code?: number): void {
    this.closedByWidget = code ?? 1005;
    this.readyState = 2;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.({} as Event);
  }

  receive(frame: Record<string, unknown>): void {
    this.onmessage?.({ data: JSON.stringify(frame) } as MessageEvent);
  }

  /** A binary frame from the far end: the agent's voice. */
  receiveBinary(data: ArrayBuffer): void {
    this.onmessage?.({ data } as MessageEvent);
  }

  /** The far end closes (or the browser notices the connection is gone). */
  lose(code = 1006, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason } as CloseEvent);
  }

  sentOf(type: string): Record<string, unknown>[] {
    return this.sent.filter((f) => f.type === type);
  }
}

/** The browser's network and visibility events, raised by the test. */
export class FakeSurroundings implements Surroundings {
  isOnline = true;
  private on: Parameters<Surroundings['watch']>[0] | undefined;
  online = () => this.isOnline;
  watch(on: Parameters<Surroundings['watch']>[0]) {
    this.on = on;
    return () => (this.on = undefined);
  }
  goOffline(): void {
    this.isOnline = false;
    this.on?.offline();
  }
  goOnline(): void {
    this.isOnline = true;
    this.on?.online();
  }
  becomeVisible(): void {
    this.on?.visible();
  }
}

/** sessionStorage in memory. */
export class MemoryStorage implements Storage {
  private readonly items = new Map<string, string>();
  get length(): number {
    return this.items.size;
  }
  clear(): void {
    this.items.clear();
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  key(index: number): string | null {
    return [...this.items.keys()][index] ?? null;
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

/** How long each of `n` lost sockets took to be replaced by the next, in steps of `stepMs` of fake time. */
export async function reconnectWaits(
  sockets: FakeSocket[],
  n: number,
  settle: (ms: number) => Promise<unknown>,
  stepMs: number,
): Promise<number[]> {
  const waits: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = sockets.length;
    sockets[before - 1]!.lose();
    let waited = 0;
    while (sockets.length === before) {
      await settle(stepMs);
      waited += stepMs;
    }
    waits.push(waited);
  }
  return waits;
}
