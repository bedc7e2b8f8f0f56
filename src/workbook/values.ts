/** Value-level rules of the profile: kinds, keys, cuts and number parsing (workbook-profile.md). */
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

/** Text as a number: trimmed, full-width forms folded to ASCII, thousands separators removed. */
export function parseNumberText(text: string): number | null {
  let t = text.trim();
  if (t === '') return null;
  t = t.replace(FULL_WIDTH, (ch) => String.fromCharCode(ch.charCodeAt(0) - 0xfee0));
  t = t.replaceAll(',', '');
  if (!FLOAT.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}
