import type { IncomingMessage } from 'node:http';

/**
 * Where a browser on this machine reaches a server bound to `host`: the host itself, loopback for
 * every interface (`0.0.0.0`, `::`). One name for every link the service and the demo print, so a
 * link opened from one line is never another origin than one opened from the next (README, Run it).
 */
export function localBaseUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * The service's one public address: PUBLIC_BASE_URL when set (behind a proxy, README
 * Configuration), else {@link localBaseUrl} once the server listens. Every URL the service gives
 * out (a hook call's `reply_url`, the OpenAPI `servers`, an invitation's link) and every check of
 * its own origin reads it here.
 */
export class PublicAddress {
  #bound: string | undefined;

  constructor(
    private readonly configured: string | undefined,
    private readonly host: string,
  ) {}

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
    this.#bound = localBaseUrl(this.host, port);
  }

  /** The service's own origin as the browser sees it: the configured one, else the Host the request was sent to. */
  originFor(req: IncomingMessage): string {
    return this.configured ? new URL(this.configured).origin : `http://${req.headers.host ?? ''}`;
  }
}
