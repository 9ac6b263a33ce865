import type { TurnMode, WidgetTheme } from './protocol';

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
  /** The deployment's look as the tab's last `ready` gave it: the launcher shows it at once on the next page. */
  theme?: WidgetTheme;
}

export interface Asked {
  mode: TurnMode;
  spoken: number;
}

/** A tab that remembers no conversation, only the visitor's language and the deployment's look. */
export const forgotten = (language?: string, theme?: WidgetTheme): Remembered => ({
  unconfirmed: [],
  asked: {},
  language,
  ...(theme ? { theme } : {}),
});

const keyOf = (deploymentId: string): string => `concierge:${deploymentId}`;

/** JSON kept in `storage` under `key`; `empty` when there is none, or it is unreadable (blocked storage, another's text). */
export function stored<T>(storage: Storage | undefined, key: string, empty: T): T {
  try {
    return (JSON.parse(storage?.getItem(key) ?? 'null') as T | null) ?? empty;
  } catch {
    return empty;
  }
}

/** Keeps `value` as JSON in `storage`; a full or blocked storage keeps nothing, and says nothing. */
export function store(storage: Storage | undefined, key: string, value: unknown): void {
  try {
    storage?.setItem(key, JSON.stringify(value));
  } catch {
    // the page goes on without it
  }
}

/** What this tab remembers for the deployment; nothing when it is unreadable. */
export function recall(storage: Storage | undefined, deploymentId: string): Remembered {
  const kept = stored<Remembered | null>(storage, keyOf(deploymentId), null);
  // Remembered by an older widget: no turns asked.
  return kept && Array.isArray(kept.unconfirmed) ? { ...kept, asked: kept.asked ?? {} } : forgotten();
}

/** Keeps what this tab remembers; a full or blocked storage only means the conversation won't survive a reload. */
export function remember(storage: Storage | undefined, deploymentId: string, memory: Remembered): void {
  store(storage, keyOf(deploymentId), memory);
}
