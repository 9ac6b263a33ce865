/**
 * Preloaded into a target by the idle-memory bench (with --expose-gc): SIGUSR2 runs a full
 * collection, so resident memory is read without the garbage that setting up left behind.
 */
process.on('SIGUSR2', () => (globalThis as { gc?: () => void }).gc?.());
