import { type ReadError, readError } from '../errors.ts';

/**
 * Small readers for Dagu's JSON bodies: an unexpected body becomes a clear `internal_error` instead of
 * a half-filled result.
 */

export type Json = Record<string, unknown>;

const unexpected = (what: string) =>
  readError.internal(`Dagu returned an unexpected response: ${what} is missing or has the wrong type.`);

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function object(value: unknown, what: string): Json {
  if (!isRecord(value)) throw unexpected(what);
  return value;
}

/** `internal_error` for a Dagu body without the shape the gateway needs: names the read and the problem. */
export function malformedBody(read: string, what: string): ReadError {
  return readError.internal(
    `Dagu answered ${read} with a body that does not have the expected shape (${what}).`,
  );
}

/** No items: one frozen array for every `null` list (a step's absent sub runs), not a new one each time. */
const NO_ITEMS: readonly unknown[] = Object.freeze([]);

/** An array; Dagu serialises empty Go slices as `null`, which reads as `[]`. */
export function list(value: unknown, what: string): readonly unknown[] {
  if (value === null || value === undefined) return NO_ITEMS;
  if (!Array.isArray(value)) throw unexpected(what);
  return value;
}

export function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw unexpected(what);
  return value;
}

export function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function integer(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw unexpected(what);
  return value;
}

export function optionalInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
