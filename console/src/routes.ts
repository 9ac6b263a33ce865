/** `#/agents/123` → `['agents', '123']`; empty for the home page. */
export function routeOf(hash: string): string[] {
  return hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
}
