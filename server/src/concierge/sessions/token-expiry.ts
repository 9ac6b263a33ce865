/** How long past its `exp` a token is still taken: clocks differ between the customer's server and ours. */
const TOKEN_TOLERANCE_MS = 30_000;

/**
 * A socket lives as long as its token, with the clock tolerance (README, Concierge sessions): then
 * `token_expired` and 4401. A refreshed token that expires later moves the end.
 */
export class TokenExpiry {
  /** The current token's `exp`, in seconds. */
  #exp = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly expired: () => void) {}

  get exp(): number {
    return this.#exp;
  }

  set(exp: number): void {
    this.#exp = exp;
    clearTimeout(this.#timer);
    const msLeft = exp * 1000 + TOKEN_TOLERANCE_MS - Date.now();
    this.#timer = setTimeout(this.expired, Math.min(Math.max(msLeft, 0), 2 ** 31 - 1));
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}
