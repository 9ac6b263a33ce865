import { readFile } from 'node:fs/promises';
import { AppError } from '../errors.js';

/**
 * A file the build writes before the service starts (the widget's bundle, the SDK's tarball): read
 * on first use and kept, since it never changes under a running service; `404` with how to build
 * it while it is missing.
 */
export function builtFile(file: string, howToBuild: string): () => Promise<Buffer> {
  let content: Buffer | undefined;
  return async () => {
    try {
      content ??= await readFile(file);
    } catch {
      throw new AppError('not_found', howToBuild);
    }
    return content;
  };
}
