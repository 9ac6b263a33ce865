import { describe, expect, it } from 'vitest';
import { MemoryStorage } from './fake-browser';
import { forgotten, recall, remember } from './memory';

describe('what a tab remembers (sessionStorage)', () => {
  it('keeps a conversation per deployment across a reload', () => {
    const storage = new MemoryStorage();
    const memory = forgotten('fr-FR');
    memory.conversation_id = 'c1';
    memory.unconfirmed.push({ client_turn_id: 't1', text: 'Bonjour', mode: 'text', language: 'fr-FR' });
    memory.asked.t1 = { mode: 'voice', spoken: 2 };
    remember(storage, 'd1', memory);
    expect(storage.getItem('concierge:d1')).not.toBeNull();
    expect(recall(storage, 'd1')).toEqual(memory);
    expect(recall(storage, 'd2')).toEqual({ unconfirmed: [], asked: {}, language: undefined });
  });

  it('starts afresh from what it cannot read, and reads what an older widget wrote', () => {
    const storage = new MemoryStorage();
    storage.setItem('concierge:d1', '{not json');
    expect(recall(storage, 'd1')).toEqual(forgotten());
    storage.setItem('concierge:d1', JSON.stringify({ conversation_id: 'c1', unconfirmed: 'no' }));
    expect(recall(storage, 'd1')).toEqual(forgotten());
    storage.setItem('concierge:d1', JSON.stringify({ conversation_id: 'c1', unconfirmed: [] }));
    expect(recall(storage, 'd1')).toEqual({ conversation_id: 'c1', unconfirmed: [], asked: {} });
    expect(recall(undefined, 'd1')).toEqual(forgotten());
  });

  it('goes on without a word when storage is full or blocked', () => {
    const full = new MemoryStorage();
    full.setItem = () => {
      throw new DOMException('full', 'QuotaExceededError');
    };
    expect(() => remember(full, 'd1', forgotten())).not.toThrow();
    expect(() => remember(undefined, 'd1', forgotten())).not.toThrow();
  });
});
