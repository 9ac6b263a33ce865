/** Spec and config objects live in text columns; these are the only two places they cross over. */
export const toJsonColumn = (value: unknown): string => JSON.stringify(value);

export function fromJsonColumn<T = Record<string, unknown>>(text: string): T;
export function fromJsonColumn<T = Record<string, unknown>>(text: string | null): T | null;
export function fromJsonColumn<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
