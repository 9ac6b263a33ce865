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

/**
 * A URL the service calls. User information (`https://user:pass@host/`) is refused: Node would
 * send it as an Authorization header that the delivery record does not show; a secret belongs in
 * the signature, or in the path.
 */
export const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  // zod runs a refinement even after `.url()` has refused the value (`""` among others), so it parses safely.
  .refine((value) => {
    const url = URL.parse(value);
    return !url || (!url.username && !url.password);
  }, 'must not carry a user name or password (user:pass@): the signature authenticates the call; put a token in the path if you need one');

/**
 * The body of an action that takes nothing but cannot be undone lightly (deactivating a
 * deployment): `{}`. Required all the same, so that a bare POST (a link followed, a form another
 * site sends) does nothing: a JSON body cannot be sent across sites without the browser asking.
 */
export const explicitBody = z.strictObject({}).meta({ id: 'Confirm', description: 'Send `{}`' });
