/** Which number formats show a number as a date, a time or both (ECMA-376 Part 1, 18.8.30 and 18.8.31). */
import type { DateKind } from './dates.ts';

/**
 * Built-in format ids with a date or time meaning. 27–36 and 50–58 are the East Asian built-ins
 * (their exact code depends on the locale, but every variant is a date or a time).
 */
const BUILTIN: ReadonlyMap<number, DateKind> = new Map<number, DateKind>([
  [14, 'date'],
  [15, 'date'],
  [16, 'date'],
  [17, 'date'],
  [18, 'time'],
  [19, 'time'],
  [20, 'time'],
  [21, 'time'],
  [22, 'datetime'],
  [27, 'date'],
  [28, 'date'],
  [29, 'date'],
  [30, 'date'],
  [31, 'date'],
  [32, 'time'],
  [33, 'time'],
  [34, 'time'],
  [35, 'time'],
  [36, 'date'],
  [45, 'time'],
  [46, 'time'],
  [47, 'time'],
  [50, 'date'],
  [51, 'date'],
  [52, 'date'],
  [53, 'date'],
  [54, 'date'],
  [55, 'date'],
  [56, 'date'],
  [57, 'date'],
  [58, 'date'],
]);

/**
 * Classifies a format code by the date and time tokens left once literals are removed:
 * quoted text, `\x` escapes, `_x` spacing, `*x` fills, and bracketed colours, conditions and
 * locales (the elapsed-time brackets `[h]`, `[mm]`, `[ss]` stay as time tokens).
 * Only the first section counts: it is the one positive numbers use.
 */
export function classifyFormatCode(code: string): DateKind | null {
  let bare = '';
  for (let i = 0; i < code.length; i++) {
    const ch = code[i]!;
    if (ch === ';') break;
    if (ch === '"') {
      const end = code.indexOf('"', i + 1);
      i = end === -1 ? code.length : end;
    } else if (ch === '\\' || ch === '_' || ch === '*') {
      i++;
    } else if (ch === '[') {
      const end = code.indexOf(']', i + 1);
      const inner = code.slice(i + 1, end === -1 ? code.length : end);
      if (/^(h+|m+|s+)$/i.test(inner)) bare += inner;
      i = end === -1 ? code.length : end;
    } else {
      bare += ch;
    }
  }
  bare = bare.replace(/general/gi, '').replace(/E[+-]/gi, '');
  const hasAmPm = /AM\/PM|A\/P/i.test(bare);
  if (hasAmPm) bare = bare.replace(/AM\/PM|A\/P/gi, '');
  const hasDate = /[yde]/i.test(bare);
  const hasTime = hasAmPm || /[hs]/i.test(bare);
  // `m` is a month unless hours or seconds are present, when it is a minute.
  const hasMonth = !hasTime && /m/i.test(bare);
  if ((hasDate || hasMonth) && hasTime) return 'datetime';
  if (hasDate || hasMonth) return 'date';
  if (hasTime) return 'time';
  return null;
}

/** The date kind of a format id, using the workbook's own code for it when the workbook defines one. */
export function classifyNumFmt(id: number, customCode: string | undefined): DateKind | null {
  if (customCode !== undefined) return classifyFormatCode(customCode);
  return BUILTIN.get(id) ?? null;
}
