/** Cell addresses and ranges. Columns are 0-based internally, rows 1-based as in the sheet. */

/** Excel's grid: a cell outside it makes the sheet malformed. */
export const MAX_ROWS = 1_048_576;
export const MAX_COLUMNS = 16_384;

export function columnLetters(col: number): string {
  let n = col + 1;
  let letters = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    letters = String.fromCharCode(65 + rem) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

export function cellAddress(col: number, row: number): string {
  return `${columnLetters(col)}${row}`;
}

/**
 * The 0-based column of a reference such as `AB12` or `$AB$12`, or -1 when it has no valid column.
 * Called once per cell, so it works on char codes instead of a regular expression.
 */
export function columnOfRef(ref: string): number {
  let col = 0;
  let i = ref.charCodeAt(0) === 36 ? 1 : 0; // $
  const start = i;
  for (; i < ref.length; i++) {
    let c = ref.charCodeAt(i);
    if (c >= 97 && c <= 122) c -= 32; // lower case
    if (c < 65 || c > 90) break;
    col = col * 26 + (c - 64);
    if (col > MAX_COLUMNS) return -1;
  }
  return i === start ? -1 : col - 1;
}

/** Sheet names in ranges follow Excel's quoting: plain names bare, anything else in single quotes. */
export function quoteSheetName(name: string): string {
  if (/^[A-Za-z_\u00C0-\uFFFF][A-Za-z0-9_.\u00C0-\uFFFF]*$/.test(name) && !/^[A-Za-z]{1,3}[0-9]+$/.test(name))
    return name;
  return `'${name.replaceAll("'", "''")}'`;
}

export function rangeAddress(sheet: string, c1: number, r1: number, c2: number, r2: number): string {
  return `${quoteSheetName(sheet)}!${cellAddress(c1, r1)}:${cellAddress(c2, r2)}`;
}
