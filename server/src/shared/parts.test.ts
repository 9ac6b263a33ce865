import { describe, expect, it } from 'vitest';
import { Parts } from './parts.js';

describe('the app parts', () => {
  const recorded = () => {
    const seen: string[] = [];
    const part = (name: string, failStart = false) => ({
      start: async () => {
        seen.push(`start ${name}`);
        if (failStart) throw new Error(`${name} failed`);
      },
      stop: () => void seen.push(`stop ${name}`),
    });
    return { seen, part };
  };

  it('start in the order added and stop in the reverse one, a part without start stopped all the same', async () => {
    const { seen, part } = recorded();
    const parts = new Parts();
    parts.add({ stop: () => void seen.push('stop store') });
    parts.add(part('loop'));
    parts.add(part('server'));
    await parts.start();
    await parts.stop();
    expect(seen).toEqual(['start loop', 'start server', 'stop server', 'stop loop', 'stop store']);
  });

  it('stop what they started when a later part fails to start, and throw its error', async () => {
    const { seen, part } = recorded();
    const parts = new Parts();
    parts.add({ stop: () => void seen.push('stop store') });
    parts.add(part('loop'));
    parts.add(part('server', true));
    parts.add(part('never'));
    await expect(parts.start()).rejects.toThrow('server failed');
    expect(seen).toEqual(['start loop', 'start server', 'stop loop']);
  });
});
