import type { Middleware } from './exchange.js';

/**
 * Management responses carry secrets (a new deployment's signing secret, a rotated API key) and
 * customer data: no cache between the service and the customer, shared or private, may keep
 * them. Set before anything can answer, so errors carry it too.
 */
export const noStore: Middleware = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};
