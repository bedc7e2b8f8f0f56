/**
 * Timestamps in `data`: RFC 3339 in UTC with exactly three fraction digits (`2026-10-27T08:02:02.000Z`).
 * Dagu writes RFC 3339 with second precision, sometimes with the server's local offset, and uses `""`,
 * `"-"` or Go's zero time for "not recorded"; all of those become `undefined` so the field is omitted.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

/** Go's `time.Time{}` (0001-01-01T00:00:00Z): Dagu's "never happened". */
const GO_ZERO_TIME = (() => {
  const zero = new Date(0);
  zero.setUTCFullYear(1, 0, 1);
  return zero.getTime();
})();

/**
 * Parsed timestamps, by their text: a run's times are read again on every read of it, and parsing one
 * costs more than the rest of its step's mapping. Bounded: cleared when full.
 */
const parsed = new Map<string, string | undefined>();
const MAX_PARSED = 4096;
const MAX_PARSED_TEXT = 64;

export function toRfc3339Millis(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.length > MAX_PARSED_TEXT) return parseRfc3339Millis(value);
  const known = parsed.get(value);
  if (known !== undefined || parsed.has(value)) return known;
  const result = parseRfc3339Millis(value);
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(value, result);
  return result;
}

function parseRfc3339Millis(value: string): string | undefined {
  const text = value.trim();
  if (text === '' || text === '-') return undefined;
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const offsetHours = Number(oh);
    const offsetMins = Number(om);
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // Extra fraction digits are cut, not rounded: rounding could move the instant into the next second.
  const millis = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));
  // setUTCFullYear keeps years 0–99 literal (Date.UTC would map them to 1900–1999).
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  const instant = date.getTime() - offsetMinutes * 60_000;
  if (Number.isNaN(instant) || instant === GO_ZERO_TIME) return undefined;
  const utc = new Date(instant);
  const utcYear = utc.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) return undefined;
  return utc.toISOString();
}
