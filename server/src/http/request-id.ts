import { randomUUID } from 'node:crypto';
import type { Middleware } from './exchange.js';

// Anything else is replaced: an echoed id ends up in logs, so it must not carry newlines or markup.
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestId: Middleware = (req, res, next) => {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && WELL_FORMED.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
