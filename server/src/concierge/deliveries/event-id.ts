import { randomBase62 } from '../../shared/random.js';

/** A transcript event's `id` (README, Transcript events): what its receiver deduplicates on. */
export const newEventId = (): string => `evt_${randomBase62(24)}`;
