import type { CloseCode } from '#protocol/close-codes';

/** What a session needs of its socket: `ws`'s WebSocket, or a fake in tests. */
export interface SessionSocket {
  readonly bufferedAmount: number;
  /** Text frames are JSON; binary frames are the agent's voice (PCM). */
  send(data: string | Buffer, onSent?: () => void): void;
  close(code: CloseCode, reason: string): void;
  terminate(): void;
  ping(): void;
  /** Stops reading what the peer sends (TCP holds it back), and starts again. */
  pause(): void;
  resume(): void;
}
