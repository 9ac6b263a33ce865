import { parentPort } from 'node:worker_threads';
import { AppError } from '../../errors.js';
import { type ReadJob, readDocument } from './document-reading.js';

/*
 * A reading thread (see DocumentReader): reads one document at a time as the service asks, and
 * answers with its passages or the refusal a customer is shown. Anything else that goes wrong is
 * said as a plain failure; the thread itself lives on for the next document.
 */
parentPort!.on('message', async ({ id, job }: { id: number; job: ReadJob }) => {
  try {
    parentPort!.postMessage({ id, read: await readDocument(job) });
  } catch (err) {
    parentPort!.postMessage({
      id,
      refused:
        err instanceof AppError
          ? { code: err.code, message: err.message, details: err.details }
          : {
              code: 'invalid_request',
              message: 'The document could not be read',
              details: [{ path: job.path, message: String((err as Error)?.message ?? err).slice(0, 200) }],
            },
    });
  }
});

// pdf.js is loaded now, while no document waits: a document's deadline counts its reading only.
await import('unpdf');
parentPort!.postMessage({ ready: true });
