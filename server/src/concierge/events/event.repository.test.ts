import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore, type StoreKind, startService, type TestService } from '../../../test/harness.js';
import type { NewEvent } from '#protocol/frames';
import { appendEvents } from './event.repository.js';

function suite(kind: StoreKind) {
  let service: TestService;
  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(async () => service?.close());

  it('refuses to number events for a conversation that is not there, with or without events', async () => {
    const append = (conversationId: string, events: NewEvent[]) =>
      service.app.store.db.transaction().execute((trx) => appendEvents(trx, conversationId, events));
    await expect(append('00000000-0000-4000-8000-000000000000', [])).rejects.toThrow('appendEvents: no conversation');
    await expect(
      append('00000000-0000-4000-8000-000000000000', [
        { type: 'turn_acknowledged', turn_id: '00000000-0000-4000-8000-000000000001' },
      ]),
    ).rejects.toThrow('appendEvents: no conversation');
  });
}

describeEachStore('appending widget events', suite);
