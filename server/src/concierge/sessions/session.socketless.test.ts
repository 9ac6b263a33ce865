import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../logger.js';
import { StoreHealth } from '../../store/store-health.js';
import type { DeploymentContext, DeploymentDirectory } from '../../deployments/deployment-context.js';
import { LocalBus } from '../events/conversation-bus.js';
import { Close } from '#protocol/close-codes';
import { Session, type SessionShared } from './session.js';
import type { SessionServices } from './session-services.js';
import { MAX_QUEUED_BYTES, MAX_QUEUED_MESSAGES } from './socket-inbox.js';
import type { SessionSocket } from './session-socket.js';
import { DRAIN_TIMEOUT_MS } from './event-cursor.js';

/** The socket side a session sees, recorded: no network, no server. */
class RecordingSocket implements SessionSocket {
  bufferedAmount = 0;
  readonly sent: unknown[] = [];
  closedWith: { code: number; reason: string } | undefined;
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
  }
  terminate(): void {
    this.closedWith = { code: 1006, reason: '' };
  }
  ping(): void {}
  paused = false;
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

const dep = {
  id: '0b7f7f7e-3c1a-4d9b-9a3e-6f2a1c0d4e5f',
  status: 'active',
  signing: { secrets: ['whsec_unit'] },
  agent: { name: 'Front desk', greeting: null, language: 'en-US', voice: null },
  widget: { theme: {} },
} as unknown as DeploymentContext;

/** A session before `hello` touches no service: any call to one fails the test. */
function context(deployments: Partial<DeploymentDirectory> = { get: async () => dep }): SessionShared {
  const untouched = new Proxy(
    {},
    { get: (_t, name) => () => Promise.reject(new Error(`unexpected call: ${String(name)}`)) },
  );
  return {
    services: {
      conversations: untouched as SessionServices['conversations'],
      handling: untouched as SessionServices['handling'],
      turns: untouched as SessionServices['turns'],
      pages: untouched as SessionServices['pages'],
      deployments: deployments as DeploymentDirectory,
      history: untouched as SessionServices['history'],
      bus: new LocalBus(),
      health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }),
      // Counting a refused token touches no store.
      diagnostics: { refused: () => {}, opened: () => {} } as unknown as SessionServices['diagnostics'],
      speech: untouched as SessionServices['speech'],
      synthesis: untouched as SessionServices['synthesis'],
    },
    settings: { newConversationsPerSub: 10, helloTimeoutMs: 1_000, drainTimeoutMs: DRAIN_TIMEOUT_MS },
    registry: { join: () => true, leave: () => {} },
  };
}

const frame = (value: unknown) => Buffer.from(JSON.stringify(value));
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('one session, without a network', () => {
  afterEach(() => vi.useRealTimers());

  it('closes 4400 when the first frame is not a hello, a ping included, and sends nothing', async () => {
    for (const first of [
      { type: 'ping' },
      { type: 'user_turn', client_turn_id: 'c', text: 'hi', mode: 'text' },
      'not json',
    ]) {
      const socket = new RecordingSocket();
      const session = new Session(socket, context(), dep, () => {});
      session.receive(typeof first === 'string' ? Buffer.from(first) : frame(first), false);
      await settled();
      expect(socket.closedWith).toEqual({ code: Close.protocol, reason: 'the first message must be a valid hello' });
      expect(socket.sent).toEqual([]);
      session.dispose();
    }
  });

  it('closes 4408 when no hello comes in time', async () => {
    vi.useFakeTimers();
    const socket = new RecordingSocket();
    new Session(socket, context(), dep, () => {});
    await vi.advanceTimersByTimeAsync(999);
    expect(socket.closedWith).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(socket.closedWith).toEqual({ code: Close.noHello, reason: 'no hello in time' });
  });

  it('closes 4401 on a token that is not a JWT, and 4403 on one for another deployment, without a frame', async () => {
    const other = 'eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJzb21lb25lLWVsc2UifQ.c2ln';
    for (const [token, code] of [
      ['not-a-token', Close.badToken],
      [other, Close.forbidden],
    ] as const) {
      const socket = new RecordingSocket();
      new Session(socket, context(), dep, () => {}).receive(frame({ type: 'hello', token }), false);
      await settled();
      await settled();
      expect(socket.closedWith?.code).toBe(code);
      expect(socket.sent).toEqual([]);
    }
  });

  it('refuses a binary frame before ready at once (4400), without holding it', async () => {
    const socket = new RecordingSocket();
    const session = new Session(socket, context(), dep, () => {});
    session.receive(Buffer.alloc(16_384), true);
    expect(socket.closedWith).toEqual({
      code: Close.protocol,
      reason: 'Binary frames belong between audio_start and audio_end, after ready',
    });
    session.dispose();
  });

  it('stops reading while a message is handled, and closes 1009 past 1,024 messages or 1 MiB unhandled rather than hold them', async () => {
    // hello's deployment read never ends: everything sent after it waits.
    const socket = new RecordingSocket();
    const session = new Session(socket, context({ get: () => new Promise(() => {}) }), dep, () => {});
    session.receive(frame({ type: 'hello', token: 'x' }), false);
    expect(socket.paused).toBe(true);
    for (let i = 1; i < MAX_QUEUED_MESSAGES; i++) session.receive(frame({ type: 'ping' }), false);
    expect(socket.closedWith).toBeUndefined();
    session.receive(frame({ type: 'ping' }), false);
    expect(socket.closedWith).toEqual({
      code: Close.frameTooLarge,
      reason: 'More was sent than the service holds unhandled for one socket; reconnect and resume',
    });
    session.dispose();

    // Bytes count too: 1 MiB of text frames behind a pending hello.
    const flooded = new RecordingSocket();
    const other = new Session(flooded, context({ get: () => new Promise(() => {}) }), dep, () => {});
    other.receive(frame({ type: 'hello', token: 'x' }), false);
    for (let i = 0; i < MAX_QUEUED_BYTES / 16_000 && !flooded.closedWith; i++)
      other.receive(Buffer.alloc(16_000, 32), false);
    expect(flooded.closedWith?.code).toBe(Close.frameTooLarge);
    other.dispose();
  });
});
