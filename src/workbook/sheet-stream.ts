/**
 * Streams one worksheet part (`<sheetData>` rows and cells) into a SheetProfiler, once, in constant
 * memory: a row is decoded, handed over and forgotten. Sizes never come from the declared
 * `<dimension>` or from addresses, only from cells actually present.
 */
import { columnOfRef, MAX_COLUMNS, MAX_ROWS } from './cells.ts';
import {
  type DateKind,
  formatDate,
  formatDateTime,
  formatTime,
  parseDateText,
  serialToIso,
} from './dates.ts';
import type { CellValue, DateSystem } from './model.ts';
import type { SharedStrings } from './shared-strings.ts';
import { RowCells, type SheetProfiler } from './sheet-profile.ts';
import { maxTextRun, parseXmlChunks, unescapeXstring } from './xml.ts';

export interface SheetContext {
  strings: SharedStrings;
  /** Date kind per cell format index (`s`). */
  dateKinds: readonly (DateKind | null)[];
  dateSystem: DateSystem;
  maxCellChars: number;
}

/** A problem inside a well-formed sheet (an address off the grid, rows out of order): the sheet stops there. */
export class SheetDataError extends Error {
  override readonly name = 'SheetDataError';
}

const TRUE_FLAGS = new Set(['1', 'true']);

/** An ISO 8601 `t="d"` cell as the profile's ISO text, shaped by the cell's format when it has one. */
function isoCell(text: string, kind: DateKind | null): CellValue {
  const ms = parseDateText(text.trim().replace(/(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/i, ''));
  if (ms === null) return text;
  if (kind === 'time') return formatTime(ms);
  if (kind !== 'datetime' && ms % 86_400_000 === 0) return formatDate(ms);
  return formatDateTime(ms);
}

export async function streamSheet(
  chunks: AsyncIterable<string>,
  part: string,
  context: SheetContext,
  profiler: SheetProfiler,
): Promise<void> {
  const { strings, dateKinds, dateSystem, maxCellChars } = context;
  const warnings = profiler.warnings;
  const cells = new RowCells();

  let inSheetData = false;
  let done = false;
  let rowNumber = 0;
  let rowOpen = false;
  let hidden = false;
  let full = true;
  let col = -1;
  // The current cell: its type and style, and the text of its <v> or inline <t> elements.
  let cellOpen = false;
  let type: string | undefined;
  let style = 0;
  let ref: string | undefined;
  let collecting = false;
  let inInline = false;
  let phonetic = 0;
  let text = '';
  let hasText = false;

  const address = () => ref ?? `R${rowNumber}C${col + 1}`;

  const finishCell = () => {
    if (!hasText) return;
    let value: CellValue;
    let error: string | undefined;
    if (type === undefined || type === 'n') {
      if (!full) value = 0;
      else {
        const n = Number(text);
        if (text.trim() === '' || !Number.isFinite(n)) {
          value = null;
          error = 'invalid number';
        } else {
          const kind = dateKinds[style] ?? null;
          value = kind === null ? n : (serialToIso(n, kind, dateSystem) ?? n);
        }
      }
    } else if (type === 's') {
      const index = Number(text);
      if (!Number.isInteger(index) || index < 0 || index >= strings.length) {
        value = null;
        error = 'invalid shared string index';
      } else if (strings.isEmpty(index)) value = null;
      else if (!full) value = strings.isBlank(index) ? '' : 0;
      else {
        value = strings.get(index);
        if (strings.cut.has(index))
          warnings.add(`text longer than ${maxCellChars} characters was cut`, address());
      }
    } else if (type === 'str' || type === 'inlineStr') {
      if (text.length === 0) value = null;
      else {
        if (text.length > maxCellChars) {
          text = text.slice(0, maxCellChars);
          if (full) warnings.add(`text longer than ${maxCellChars} characters was cut`, address());
        }
        value = unescapeXstring(text);
      }
    } else if (type === 'b') {
      value = TRUE_FLAGS.has(text.trim().toLowerCase());
    } else if (type === 'e') {
      value = null;
      error = text.trim();
    } else if (type === 'd') {
      value = full ? isoCell(text, dateKinds[style] ?? null) : 0;
    } else {
      value = text;
    }
    cells.push(col, value, error);
  };

  const open = (local: string, tag: { attributes: Record<string, string> }) => {
    if (!inSheetData) {
      if (local === 'sheetData') inSheetData = true;
      return;
    }
    switch (local) {
      case 'c': {
        const attributes = tag.attributes;
        ref = attributes.r;
        const next = ref === undefined ? col + 1 : columnOfRef(ref);
        if (next < 0 || next >= MAX_COLUMNS || next <= col)
          throw new SheetDataError(
            `cell ${ref ?? `after column ${col + 1}`} in row ${rowNumber} is out of order or off the grid`,
          );
        col = next;
        type = attributes.t;
        const s = attributes.s;
        style = s === undefined ? 0 : Number(s);
        cellOpen = true;
        text = '';
        hasText = false;
        return;
      }
      case 'v':
        if (cellOpen) {
          collecting = true;
          hasText = true;
        }
        return;
      case 'is':
        inInline = cellOpen;
        if (inInline) hasText = true;
        return;
      case 't':
        collecting = inInline && phonetic === 0;
        return;
      case 'rPh':
        phonetic++;
        return;
      case 'row': {
        const r = tag.attributes.r;
        const next = r === undefined ? rowNumber + 1 : Number(r);
        if (!Number.isInteger(next) || next <= rowNumber || next > MAX_ROWS)
          throw new SheetDataError(`row ${r ?? rowNumber + 1} is out of order or off the grid`);
        rowNumber = next;
        const h = tag.attributes.hidden;
        hidden = h !== undefined && TRUE_FLAGS.has(h);
        rowOpen = true;
        full = profiler.wantsValues;
        col = -1;
        cells.reset();
        return;
      }
    }
  };

  const close = (local: string) => {
    if (!inSheetData) return;
    switch (local) {
      case 'c':
        if (cellOpen) finishCell();
        cellOpen = false;
        collecting = false;
        inInline = false;
        return;
      case 'v':
      case 't':
        collecting = false;
        return;
      case 'is':
        inInline = false;
        return;
      case 'rPh':
        phonetic--;
        return;
      case 'row':
        if (rowOpen) profiler.addRow(rowNumber, hidden, cells);
        rowOpen = false;
        return;
      case 'sheetData':
        inSheetData = false;
        done = true;
        return;
    }
  };

  const onText = (chunk: string) => {
    if (collecting) text += chunk;
  };

  await parseXmlChunks(
    chunks,
    part,
    { open, close, text: onText },
    { maxRun: maxTextRun(maxCellChars), stop: () => done },
  );
}
