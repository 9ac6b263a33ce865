import type { RouteResponse } from './exchange.js';
import { z } from 'zod';
import { type AppError, type HttpErrorCode, errorStatus } from '../errors.js';

export const pageMetaSchema = z
  .object({
    page: z.number().int(),
    per_page: z.number().int(),
    total_count: z.number().int(),
    total_pages: z.number().int(),
  })
  .meta({ id: 'PageMeta' });
export type PageMeta = z.infer<typeof pageMetaSchema>;

export const emptyMetaSchema = z.object({ request_id: z.string().optional() }).meta({ id: 'Meta' });

export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(Object.keys(errorStatus) as [HttpErrorCode, ...HttpErrorCode[]]),
      message: z.string(),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
    meta: z.object({ request_id: z.string() }),
  })
  .meta({ id: 'Error' });

export function envelopeOf<T extends z.ZodType>(data: T, list = false, meta?: z.ZodType) {
  return z.object({ success: z.literal(true), data, meta: meta ?? (list ? pageMetaSchema : emptyMetaSchema) });
}

/** Data the store has already serialised (a page built as JSON by the database): spliced in as is. */
export class JsonText {
  constructor(readonly text: string) {}
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The success envelope as the JSON text sent. */
export function successBody(data: unknown, meta: object = {}): string {
  return data instanceof JsonText
    ? `{"success":true,"data":${data.text},"meta":${JSON.stringify(meta)}}`
    : JSON.stringify({ success: true, data, meta });
}

export function sendError(res: RouteResponse, err: AppError): void {
  const requestId = String(res.locals.requestId ?? '');
  const error: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.details?.length) error.details = err.details;
  res
    .writeHead(err.status, { 'Content-Type': JSON_TYPE })
    .end(JSON.stringify({ success: false, error, meta: { request_id: requestId } }));
}
