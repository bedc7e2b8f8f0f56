/**
 * The column rules of the profile (docs/workbook-profile.md, "Profile", with its conversion rules) as pure
 * functions over arrays of typed values. No I/O, no XML: the readers feed it.
 */
import { cellAddress, columnLetters } from './cells.ts';
import { formatDate, formatDateTime, parseDateText, serialToEpochMs } from './dates.ts';
import type { CellValue, ColumnProfile, ColumnType, DateSystem, OddCell } from './model.ts';
import {
  cutText,
  distinctKey,
  isBlank,
  isInt64Text,
  KIND_ORDER,
  kindOf,
  normalizeNumberText,
  parseNumberText,
} from './values.ts';
import type { SheetWarnings } from './warnings.ts';

/** Distinct counting stops here. */
export const DISTINCT_CAP = 1000;
/** `values` is listed only for at most this many distinct keys. */
export const VALUES_CAP = 12;
/** `odd_cells` lists at most this many cells. */
export const ODD_CELLS_CAP = 3;

const INT64_LIMIT = 2 ** 63;

/** Most frequent kind among non-null values (ties in KIND_ORDER), then integer→number and date→datetime. */
export function columnType(values: readonly CellValue[]): ColumnType {
  const counts = new Map<string, number>();
  for (const value of values) {
    if (value === null) continue;
    const kind = kindOf(value);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  let best: ColumnType = 'string';
  let bestCount = 0;
  for (const kind of KIND_ORDER) {
    const count = counts.get(kind) ?? 0;
    if (count > bestCount) {
      best = kind;
      bestCount = count;
    }
  }
  if (best === 'integer' && (counts.get('number') ?? 0) > 0) return 'number';
  if (best === 'date' && (counts.get('datetime') ?? 0) > 0) return 'datetime';
  return best;
}

const TRUE_TEXT = new Set(['true', 'yes', '1']);
const FALSE_TEXT = new Set(['false', 'no', '0']);

/** A value read as `type` would read it, or null when it cannot be. Dates come back as ISO text. */
export function convertValue(
  value: string | number | boolean,
  type: Exclude<ColumnType, 'string'>,
  system: DateSystem,
): number | string | boolean | null {
  switch (type) {
    case 'number':
    case 'integer': {
      if (typeof value === 'boolean') return value ? 1 : 0;
      if (typeof value === 'number') {
        if (type === 'integer' && !(Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT))
          return null;
        return value;
      }
      if (type === 'number') return parseNumberText(value);
      // Integral and within range is decided on the text itself, not on its nearest double.
      const text = normalizeNumberText(value);
      if (text === null || !isInt64Text(text)) return null;
      return Number(text);
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : null;
      const t = value.trim().toLowerCase();
      if (TRUE_TEXT.has(t)) return true;
      if (FALSE_TEXT.has(t)) return false;
      return null;
    }
    case 'date':
    case 'datetime': {
      let ms: number | null;
      if (typeof value === 'number') ms = serialToEpochMs(value, system);
      else if (typeof value === 'string') ms = parseDateText(value.trim());
      else ms = null;
      if (ms === null) return null;
      return type === 'date' ? formatDate(ms) : formatDateTime(ms);
    }
  }
}

/**
 * Profiles one column over the profiled rows. `values[i]` belongs to sheet row `rows[i]`;
 * `col` (0-based) names the cells in `odd_cells`.
 */
export function profileColumn(
  name: string,
  col: number,
  values: readonly CellValue[],
  rows: readonly number[],
  system: DateSystem,
): ColumnProfile {
  const type = columnType(values);
  let filled = 0;
  const keys = new Set<string>();
  for (const value of values) {
    if (value === null || isBlank(value)) continue;
    filled++;
    if (keys.size < DISTINCT_CAP) keys.add(distinctKey(value));
  }
  const profile: ColumnProfile = { name, type, filled, blank: values.length - filled, distinct: keys.size };
  if (keys.size <= VALUES_CAP && keys.size < filled) profile.values = [...keys].map(cutText);
  if (type === 'string') return profile;

  let odd = 0;
  const oddCells: OddCell[] = [];
  let min: number | string | undefined;
  let max: number | string | undefined;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (value === null || isBlank(value)) continue;
    const read = kindOf(value) === type ? value : convertValue(value, type, system);
    if (read === null) {
      odd++;
      if (oddCells.length < ODD_CELLS_CAP)
        oddCells.push({ cell: cellAddress(col, rows[i]!), text: cutText(distinctKey(value)) });
      continue;
    }
    if (typeof read === 'boolean') continue;
    if (min === undefined || read < min) min = read;
    if (max === undefined || read > max) max = read;
  }
  if (min !== undefined) profile.min = min;
  if (max !== undefined) profile.max = max;
  if (odd > 0) {
    profile.odd = odd;
    profile.odd_cells = oddCells;
  }
  return profile;
}

/** Header text of a cell: trimmed, line breaks as spaces. */
export function headerText(value: CellValue): string {
  if (value === null) return '';
  const text = typeof value === 'string' ? value : distinctKey(value);
  return text.replace(/\r\n|\r|\n/g, ' ').trim();
}

/** The key every sample row carries for its sheet row number, so no column may be named so. */
export const ROW_KEY = '_row';

/**
 * Names the columns: an empty header becomes the column letter, a duplicate gets `_2`, `_3`, …
 * (each with a warning on the header cell). `_row` is taken before the first column: each sample
 * row carries its sheet row number under it, so a header literally named `_row` is renamed like a
 * duplicate (`_row_2`, with the duplicate-header warning) instead of overwriting that number.
 * Names such as `__proto__` or `constructor` are kept as they are: `types` and sample rows define
 * them as own properties (see `setOwn` in sheet-profile.ts).
 */
export function makeHeaders(
  cols: readonly number[],
  values: readonly CellValue[],
  headerRow: number,
  warnings: SheetWarnings,
): string[] {
  const used = new Set<string>([ROW_KEY]);
  const headers: string[] = [];
  for (let i = 0; i < cols.length; i++) {
    const col = cols[i]!;
    const address = cellAddress(col, headerRow);
    let name = headerText(values[i] ?? null);
    if (name === '') {
      name = columnLetters(col);
      warnings.add(`header is empty; column named ${name}`, address);
    }
    if (used.has(name)) {
      let n = 2;
      while (used.has(`${name}_${n}`)) n++;
      const renamed = `${name}_${n}`;
      warnings.add(`duplicate header "${name}"; column named ${renamed}`, address);
      name = renamed;
    }
    used.add(name);
    headers.push(name);
  }
  return headers;
}
