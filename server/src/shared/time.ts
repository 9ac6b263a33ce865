/** ISO 8601 UTC with milliseconds: the one timestamp format of the API and the store. */
export const isoNow = (): string => new Date().toISOString();
export const isoIn = (ms: number): string => new Date(Date.now() + ms).toISOString();
