/** What the handler answered a call: kept per delivery, so a retried call gets the same answer. */
export interface HookResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Where the handler remembers the calls it answered, by delivery id (a turn's `delivery_id`, a
 * transcript event's `id`): the service retries a call whose answer it did not get, and the retry
 * must not run your function twice. Keep it in Redis or your database when several processes share
 * the hook; {@link MemoryDeliveryStore} is the default.
 */
export interface DeliveryStore {
  get(id: string): HookResponse | undefined | Promise<HookResponse | undefined>;
  set(id: string, response: HookResponse): void | Promise<void>;
}

/**
 * The default {@link DeliveryStore}: this process's memory, each answer kept for a day (longer
 * than the service ever retries a call, 72 hours for transcript events aside, whose handlers
 * should be idempotent anyway) and at most `limit` of them, the oldest forgotten first.
 */
export class MemoryDeliveryStore implements DeliveryStore {
  private readonly answers = new Map<string, { response: HookResponse; until: number }>();

  constructor(
    private readonly limit = 10_000,
    private readonly keepMs = 24 * 3600 * 1000,
  ) {}

  get(id: string): HookResponse | undefined {
    const kept = this.answers.get(id);
    if (kept && kept.until > Date.now()) return kept.response;
    this.answers.delete(id);
    return undefined;
  }

  set(id: string, response: HookResponse): void {
    this.answers.delete(id);
    this.answers.set(id, { response, until: Date.now() + this.keepMs });
    // A Map iterates in insertion order: the first key is the oldest answer.
    while (this.answers.size > this.limit) this.answers.delete(this.answers.keys().next().value!);
  }
}
