import { z } from 'zod';

export const SPEC_MAX_BYTES = 64 * 1024;

export const idParams = z.object({ id: z.uuid() });

export const timestamp = z.iso.datetime().meta({ example: '2026-10-02T12:00:00.000Z' });

/** A free-form JSON object, at most 64 KiB once serialised. */
export const specObject = z
  .record(z.string(), z.unknown())
  .refine((v) => Buffer.byteLength(JSON.stringify(v)) <= SPEC_MAX_BYTES, { message: 'must be at most 64 KiB as JSON' })
  .meta({ description: 'Free-form JSON object (at most 64 KiB)' });

export const deletedSchema = z.object({ id: z.uuid(), deleted: z.literal(true) }).meta({ id: 'Deleted' });

export const atLeastOneField = (value: object): boolean => Object.keys(value).length > 0;
