import type { IncomingMessage } from 'node:http';

/**
 * The service's one public address: PUBLIC_BASE_URL when set (behind a proxy, README
 * Configuration), else `http://localhost:PORT` once the server listens. Every URL the service
 * gives out (a hook call's `reply_url`, the OpenAPI `servers`) and every check of its own origin
 * reads it here.
 */
export class PublicAddress {
  #bound: string | undefined;

  constructor(private readonly configured: string | undefined) {}

  /** The base URL; empty until the server listens when none is configured. */
  get url(): string {
    return this.configured ?? this.#bound ?? '';
  }

  /** Whether the browser reaches the service over HTTPS (its cookies are then `Secure`). */
  get https(): boolean {
    return this.configured?.startsWith('https:') ?? false;
  }

  /** The server is listening on `port`: the address to give out when none is configured. */
  listening(port: number): void {
    this.#bound = `http://localhost:${port}`;
  }

  /** The service's own origin as the browser sees it: the configured one, else the Host the request was sent to. */
  originFor(req: IncomingMessage): string {
    return this.configured ? new URL(this.configured).origin : `http://${req.headers.host ?? ''}`;
  }
}
