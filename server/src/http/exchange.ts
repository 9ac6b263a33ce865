import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from './principal.js';

/**
 * A request as the service's routes and middleware see it: Node's own, with what routing found.
 * Express's requests have all of it, and so do the ones {@link dispatchRoutes} serves without
 * Express, so every piece below runs under either.
 */
export interface RouteRequest extends IncomingMessage {
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** The URL as received (Express strips a mount path from `url`; this keeps it whole). */
  originalUrl: string;
  /** The matched route's declared path, for usage counts. */
  route?: { path: string };
}

export interface RouteResponse extends ServerResponse {
  locals: { requestId?: string; principal?: Principal };
}

export type Next = (err?: unknown) => void;
export type Middleware = (req: RouteRequest, res: RouteResponse, next: Next) => unknown;
export type ErrorMiddleware = (err: unknown, req: RouteRequest, res: RouteResponse, next: Next) => unknown;

/** The path part of a request's URL. */
export const pathOf = (req: RouteRequest): string => req.originalUrl.split('?', 1)[0]!;

/** A request's route as counted (usage, metrics): its declared template, or one label for every path no route matched, so no URL can add one. */
export const routeLabelOf = (req: RouteRequest): string => (req.route ? String(req.route.path) : '(unmatched)');
