import { it } from 'vitest';

// Fails while the file loads, before any test is collected.
await import(`./${'missing'}-module.js`);

it('is never collected', () => {});
