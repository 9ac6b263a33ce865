import type { CloseCode } from '#protocol/close-codes';

/** What a session needs of its socket: `ws`'s WebSocket, or a fake in tests. */
export interface SessionSocket {
  readonly bufferedAmount: number;
  send(data: string, onSent?: () => void): void;
  close(code: CloseCode, reason: string): void;
  terminate(): void;
  ping(): void;
  /** Stops reading what the peer sends (TCP holds it back), and starts again. */
  pause(): void;
  resume(): void;
}
