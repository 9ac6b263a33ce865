import { type EgressPolicy, EgressRefused, EgressTimeout, guardedGet } from '../../shared/egress.js';

/** A page as its last fetch left it: what makes the next one conditional. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export type FetchedPage =
  { changed: true; url: string; bytes: Buffer; mediaType: string; validators: Validators } | { changed: false };

/** Why a page could not be had, said for its owner. */
export class PageUnavailable extends Error {
  override name = 'PageUnavailable';
}

const REDIRECTS = 3;
const TIMEOUT_MS = 15_000;

/**
 * GETs a knowledge base's page through the egress guard (README, Answers from your documents):
 * conditional on what the last fetch returned (`If-None-Match`, `If-Modified-Since`), following
 * up to three redirects (each target guarded), at most `limit` bytes.
 */
export async function fetchPage(
  url: string,
  last: Validators,
  egress: EgressPolicy,
  limit: number,
): Promise<FetchedPage> {
  let target = url;
  for (let hop = 0; hop <= REDIRECTS; hop++) {
    if (!/^https?:$/.test(new URL(target).protocol)) throw new PageUnavailable(`${target} is not an http(s) page`);
    const chunks: Buffer[] = [];
    let size = 0;
    const headers: Record<string, string> = {
      accept: 'text/html, application/xhtml+xml, text/markdown, text/plain, application/pdf;q=0.9',
      'user-agent': 'concierge-knowledge/1',
      ...(last.etag ? { 'if-none-match': last.etag } : {}),
      ...(last.lastModified ? { 'if-modified-since': last.lastModified } : {}),
    };
    let response;
    try {
      response = await guardedGet(target, headers, TIMEOUT_MS, egress, {
        wanted: (status) => status === 200,
        data: (chunk) => {
          size += chunk.length;
          if (size <= limit) chunks.push(chunk);
        },
      });
    } catch (err) {
      if (err instanceof EgressRefused) throw new PageUnavailable(`${target} is not fetched: ${err.message}`);
      if (err instanceof EgressTimeout) throw new PageUnavailable(`${target} did not answer within 15 s`);
      throw new PageUnavailable(`${target} could not be reached (${(err as Error).message})`);
    }
    const { status } = response;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && status !== 304 && location) {
      target = new URL(location, target).toString();
      continue;
    }
    if (status === 304) return { changed: false };
    if (status === 401 || status === 403)
      throw new PageUnavailable(`${target} asks for a sign-in (${status}): give a page open to everyone`);
    if (status !== 200) throw new PageUnavailable(`${target} answered ${status}`);
    if (size > limit) throw new PageUnavailable(`${target} is larger than ${Math.round(limit / 1_048_576)} MB`);
    const header = (name: string) => {
      const value = response.headers[name];
      return typeof value === 'string' ? value : null;
    };
    return {
      changed: true,
      url: target,
      bytes: Buffer.concat(chunks),
      mediaType: header('content-type') ?? '',
      validators: { etag: header('etag'), lastModified: header('last-modified') },
    };
  }
  throw new PageUnavailable(`${url} redirects more than ${REDIRECTS} times`);
}
