import type { TurnMode } from './protocol';

/** A visitor's turn as sent, and as resent after a reconnect until `turn_accepted` confirms it. */
export interface SentTurn {
  client_turn_id: string;
  text: string;
  mode: TurnMode;
  language?: string;
  /** The page it was asked on (README, Greeting visitors first). */
  page?: { url: string; title: string };
}

/** What one tab remembers of its conversation with a deployment, across reloads (sessionStorage). */
export interface Remembered {
  conversation_id?: string;
  /** Turns sent but not yet confirmed by `turn_accepted`: resent with the same id after a reconnect. */
  unconfirmed: SentTurn[];
  /**
   * Turns this tab asked, not yet answered, by `client_turn_id`: only this tab speaks their replies
   * and runs their actions. `spoken`: the sentences of the reply already read out, so a reload
   * mid-reply goes on from there instead of saying one twice.
   */
  asked: Record<string, Asked>;
  /** How this tab's visitor last asked: a person's message, answering no turn, is read out when it was by voice. */
  mode?: TurnMode;
  /** The visitor's choice in the language menu: kept for a new conversation too. */
  language?: string;
}

export interface Asked {
  mode: TurnMode;
  spoken: number;
}

/** A tab that remembers no conversation, only the visitor's language. */
export const forgotten = (language?: string): Remembered => ({ unconfirmed: [], asked: {}, language });

const keyOf = (deploymentId: string): string => `concierge:${deploymentId}`;

/** What this tab remembers for the deployment; nothing when it is unreadable. */
export function recall(storage: Storage | undefined, deploymentId: string): Remembered {
  try {
    const stored = JSON.parse(storage?.getItem(keyOf(deploymentId)) ?? 'null') as Remembered | null;
    // Remembered by an older widget: no turns asked.
    if (stored && Array.isArray(stored.unconfirmed)) return { ...stored, asked: stored.asked ?? {} };
  } catch {
    // unreadable: start afresh
  }
  return forgotten();
}

export function remember(storage: Storage | undefined, deploymentId: string, memory: Remembered): void {
  try {
    storage?.setItem(keyOf(deploymentId), JSON.stringify(memory));
  } catch {
    // storage full or disabled: the conversation just won't survive a reload
  }
}
