// Preloaded into a target by the memory benches (with --expose-gc): SIGUSR2 runs a full
// collection, so resident memory is read without the garbage that setting up left behind.
// Plain JavaScript: the compiled service runs without a TypeScript loader.
process.on('SIGUSR2', () => globalThis.gc?.());
