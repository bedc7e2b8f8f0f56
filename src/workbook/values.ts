/** Value-level rules of the profile: kinds, keys, cuts and number parsing (docs/workbook-profile.md). */
import { ISO_DATE, ISO_DATETIME } from './dates.ts';
import type { CellValue } from './model.ts';

export type ValueKind = 'string' | 'integer' | 'number' | 'date' | 'datetime' | 'boolean';

/** Tie order for the most frequent kind. */
export const KIND_ORDER: readonly ValueKind[] = [
  'string',
  'integer',
  'number',
  'date',
  'datetime',
  'boolean',
];

/** Text in `values` and `odd_cells` is cut to this many code points (39 + `…`). */
export const TEXT_CUT = 40;

const MAX_SAFE = 2 ** 53;

export function isBlank(value: CellValue): boolean {
  return value === null || (typeof value === 'string' && value.trim() === '');
}

export function kindOf(value: string | number | boolean): ValueKind {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number')
    return Number.isInteger(value) && Math.abs(value) <= MAX_SAFE ? 'integer' : 'number';
  if (value.length === 10 && ISO_DATE.test(value)) return 'date';
  if (value.length === 19 && ISO_DATETIME.test(value)) return 'datetime';
  return 'string';
}

/** The shortest decimal text of a number without an exponent (1 and 1.0 are both `1`). */
export function plainNumber(value: number): string {
  const text = String(value);
  const e = text.indexOf('e');
  if (e === -1) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const pointAt = (dot === -1 ? mantissa.length : dot) + exponent;
  let out: string;
  if (pointAt <= 0) out = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length);
  else out = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return negative ? `-${out}` : out;
}

/** The key a filled value is counted under in `distinct` and listed under in `values`. */
export function distinctKey(value: string | number | boolean): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return plainNumber(value);
  return value ? 'true' : 'false';
}

/** Cuts to `TEXT_CUT` code points: 39 of them and `…` when longer. */
export function cutText(text: string): string {
  if (text.length <= TEXT_CUT) return text;
  const points = Array.from(text);
  if (points.length <= TEXT_CUT) return text;
  return `${points.slice(0, TEXT_CUT - 1).join('')}…`;
}

const FULL_WIDTH = /[\uFF01-\uFF5E]/g;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Text as number text: trimmed, full-width forms folded to ASCII, thousands separators removed;
 * null unless it is then a decimal float (`[+-]digits[.digits][e±digits]`).
 */
export function normalizeNumberText(text: string): string | null {
  let t = text.trim();
  if (t === '') return null;
  t = t.replace(FULL_WIDTH, (ch) => String.fromCharCode(ch.charCodeAt(0) - 0xfee0));
  t = t.replaceAll(',', '');
  return FLOAT.test(t) ? t : null;
}

/** Text as a number: trimmed, full-width forms folded to ASCII, thousands separators removed. */
export function parseNumberText(text: string): number | null {
  const t = normalizeNumberText(text);
  if (t === null) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL_PARTS = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Whether number text (as `normalizeNumberText` gives it) is an integer within the signed 64-bit
 * range, decided exactly on its digits: a float cannot tell 9223372036854775807 (in range) from
 * 2^63 (out of range), both being 9223372036854775808 as a double.
 */
export function isInt64Text(t: string): boolean {
  const m = DECIMAL_PARTS.exec(t);
  if (m === null) return false;
  const fraction = m[3] ?? '';
  let digits = (m[2]! + fraction).replace(/^0+/, '');
  let exponent = Number(m[4] ?? '0') - fraction.length;
  if (digits === '') return true; // zero, however written
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  // A fraction left, or more than 19 digits: not an integer, or beyond ±9.2e18.
  if (exponent < 0 || digits.length + exponent > 19) return false;
  const value = BigInt(digits + '0'.repeat(exponent)) * (m[1] === '-' ? -1n : 1n);
  return value >= INT64_MIN && value <= INT64_MAX;
}
