/** Excel serial dates and the date texts the profile accepts, all as naive (zone-less) wall time. */
import type { DateSystem } from './model.ts';

export type DateKind = 'date' | 'time' | 'datetime';

const DAY_MS = 86_400_000;
/** 1900 system: serial 1 is 1900-01-01 and Excel counts a fictitious 1900-02-29 (serial 60). */
const EPOCH_1900_LOW = Date.UTC(1899, 11, 31);
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);
/** Serial of 10000-01-01 in the 1900 system: Excel has no dates from there on. */
const SERIAL_LIMIT_1900 = 2_958_466;
const SERIAL_LIMIT_1904 = SERIAL_LIMIT_1900 - 1462;

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));
const pad4 = (n: number) => String(n).padStart(4, '0');

/** Milliseconds since 1970 (UTC standing for naive wall time) of a serial, or null outside Excel's range. */
export function serialToEpochMs(serial: number, system: DateSystem): number | null {
  if (!Number.isFinite(serial) || serial < 0) return null;
  if (serial >= (system === '1904' ? SERIAL_LIMIT_1904 : SERIAL_LIMIT_1900)) return null;
  // Whole seconds: stored serials carry binary noise (00:05:05.999 is meant as 00:05:06).
  const seconds = Math.round(serial * 86_400);
  const days = Math.floor(seconds / 86_400);
  const rest = seconds - days * 86_400;
  let base: number;
  if (system === '1904') base = EPOCH_1904;
  else base = days < 60 ? EPOCH_1900_LOW : EPOCH_1900;
  return base + days * DAY_MS + rest * 1000;
}

export function formatDate(ms: number): string {
  const d = new Date(ms);
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

export function formatTime(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

export function formatDateTime(ms: number): string {
  return `${formatDate(ms)}T${formatTime(ms)}`;
}

/**
 * A number under a date, time or date-time format as ISO text, or null when it is no Excel date.
 * A fraction under a date-only format gives a date-time. A time-only format (`hh:mm:ss`, built-ins
 * 18–21 and 45–47, elapsed `[h]:mm`) always gives `HH:MM:SS`, the time of day, whatever the whole
 * days: docs/workbook-profile.md names the date-only fraction as the one exception to "time format →
 * `HH:MM:SS`", so 1.75 under `hh:mm` is `18:00:00`, not `1900-01-01T18:00:00` (an elapsed duration
 * of 42 hours also reads as `18:00:00`).
 */
export function serialToIso(serial: number, kind: DateKind, system: DateSystem): string | null {
  const ms = serialToEpochMs(serial, system);
  if (ms === null) return null;
  if (kind === 'time') return formatTime(ms);
  const timeOfDay = ((ms % DAY_MS) + DAY_MS) % DAY_MS;
  if (kind === 'date' && timeOfDay === 0) return formatDate(ms);
  return formatDateTime(ms);
}

/** Exactly `YYYY-MM-DD` / `YYYY-MM-DDTHH:MM:SS`: the texts that give a value the date or datetime kind. */
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
export const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

// RFC 3339 (offset required, fraction allowed) or `YYYY-MM-DD[T ]HH:MM[:SS]`.
const DATE_TIME_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})(?:(?:T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))|(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?))$/i;
// `YYYY-MM-DD`, `YYYY/MM/DD`, `YYYY/M/D`, `YYYY-M-D`, one separator throughout.
const DATE_TEXT = /^(\d{4})([-/])(\d{1,2})\2(\d{1,2})$/;

function civil(y: number, mo: number, d: number, h: number, mi: number, s: number): number | null {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  // Date.UTC maps years 0–99 to 1900–1999; set the year on its own so 0050 stays 0050.
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCDate() !== d || date.getUTCMonth() !== mo - 1) return null;
  return date.getTime();
}

/**
 * Parses the date and date-time texts the profile converts (docs/workbook-profile.md, "Profile", its
 * conversion rules).
 * An RFC 3339 offset is dropped: the wall time is kept, as for every other date in a workbook.
 */
export function parseDateText(text: string): number | null {
  let m = DATE_TIME_TEXT.exec(text);
  if (m) {
    const h = m[4] ?? m[7] ?? '0';
    const mi = m[5] ?? m[8] ?? '0';
    const s = m[6] ?? m[9] ?? '0';
    return civil(Number(m[1]), Number(m[2]), Number(m[3]), Number(h), Number(mi), Number(s));
  }
  m = DATE_TEXT.exec(text);
  if (m) return civil(Number(m[1]), Number(m[3]), Number(m[4]), 0, 0, 0);
  return null;
}
