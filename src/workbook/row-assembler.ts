/**
 * Turns the element events of `<sheetData>` (from saxes, or from the skimmer past the profile cap)
 * into rows of typed cells for the SheetProfiler. One row is held at a time. Sizes never come from
 * the declared `<dimension>` or from addresses, only from cells actually present.
 */
import { cellAddress, columnOfRef, MAX_COLUMNS, MAX_ROWS } from './cells.ts';
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
import { unescapeXstring } from './xml.ts';

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

export class RowAssembler {
  /** True once `</sheetData>` closed: nothing after it is needed. */
  done = false;
  /** Raw names of the open elements down to `<sheetData>` (the skimmer continues from them). */
  readonly openElements: string[] = [];
  private readonly cells = new RowCells();
  private inSheetData = false;
  private rowNumber = 0;
  private rowOpen = false;
  private hidden = false;
  /** False past the profile cap: cells are only classified blank / non-blank, not decoded. */
  private full = true;
  private col = -1;
  private cellOpen = false;
  private type: string | undefined;
  private style = 0;
  private ref: string | undefined;
  /** Inside `<v>` or an inline `<t>`: text is being gathered. */
  collecting = false;
  /**
   * Inside a `<v>` past the profile cap whose value is not needed, only whether it holds one: the
   * skimmer reports a plain number without decoding it (`onNumber`) and hands over any other text.
   */
  sensing = false;
  private inInline = false;
  private phonetic = 0;
  private text = '';
  private hasText = false;

  constructor(
    private readonly context: SheetContext,
    private readonly profiler: SheetProfiler,
  ) {}

  /** A start tag from saxes, with all its attributes. */
  openTag(local: string, name: string, attributes: Readonly<Record<string, string>>): void {
    if (this.inSheetData) {
      if (local === 'c') {
        const { r, t, s } = attributes;
        this.openCell(r === undefined ? null : columnOfRef(r), r, t, s === undefined ? 0 : Number(s));
        return;
      }
      if (local === 'row') {
        const { r, hidden } = attributes;
        this.openRow(r === undefined ? null : Number(r), hidden !== undefined && TRUE_FLAGS.has(hidden));
        return;
      }
    }
    this.open(local, name);
  }

  /** `<row>`; `row` is its `r` (null when absent: the next row). */
  openRow(row: number | null, hidden: boolean): void {
    const next = row ?? this.rowNumber + 1;
    if (!Number.isInteger(next) || next <= this.rowNumber || next > MAX_ROWS)
      throw new SheetDataError(`row ${row ?? next} is out of order or off the grid`);
    this.rowNumber = next;
    this.hidden = hidden;
    this.rowOpen = true;
    this.full = this.profiler.wantsValues;
    this.col = -1;
    this.cells.reset();
  }

  /** `<c>`; `col` is the column of its `r` (-1 when invalid, null when absent: the next column). */
  openCell(col: number | null, ref: string | undefined, type: string | undefined, style: number): void {
    const next = col ?? this.col + 1;
    if (next < 0 || next >= MAX_COLUMNS || next <= this.col)
      throw new SheetDataError(
        `cell ${ref ?? `after column ${this.col + 1}`} in row ${this.rowNumber} is out of order or off the grid`,
      );
    this.col = next;
    this.ref = ref;
    this.type = type;
    this.style = style;
    this.cellOpen = true;
    this.text = '';
    this.hasText = false;
  }

  /** Any other start tag; `name` is the raw element name, `local` the name without its prefix. */
  open(local: string, name: string): void {
    if (!this.inSheetData) {
      this.openElements.push(name);
      if (local === 'sheetData') this.inSheetData = true;
      return;
    }
    switch (local) {
      case 'v':
        if (this.cellOpen) {
          // Past the profile cap only shared-string indexes and formula or inline text are gathered;
          // other values are only sensed: whether there is one decides whether the cell is blank.
          const type = this.type;
          this.collecting = this.full || type === 's' || type === 'str' || type === 'inlineStr';
          this.sensing = !this.collecting;
          this.hasText = true;
        }
        return;
      case 'is':
        this.inInline = this.cellOpen;
        if (this.inInline) this.hasText = true;
        return;
      case 't':
        this.collecting = this.inInline && this.phonetic === 0;
        return;
      case 'rPh':
        this.phonetic++;
        return;
    }
  }

  close(local: string): void {
    if (!this.inSheetData) {
      this.openElements.pop();
      return;
    }
    switch (local) {
      case 'c':
        if (this.cellOpen) this.finishCell();
        this.cellOpen = false;
        this.collecting = false;
        this.sensing = false;
        this.inInline = false;
        return;
      case 'v':
        this.collecting = false;
        this.sensing = false;
        return;
      case 't':
        this.collecting = false;
        return;
      case 'is':
        this.inInline = false;
        return;
      case 'rPh':
        this.phonetic--;
        return;
      case 'row':
        if (this.rowOpen) this.profiler.addRow(this.rowNumber, this.hidden, this.cells);
        this.rowOpen = false;
        return;
      case 'sheetData':
        this.inSheetData = false;
        this.done = true;
        return;
    }
  }

  onText(text: string): void {
    if (this.collecting || this.sensing) this.text += text;
  }

  /**
   * The skimmer found that the whole text of a sensed `<v>` is a plain decimal number (an optional
   * `-`, digits, an optional fraction; short enough to be finite). Returns false when text was
   * already gathered, so the skimmer hands over the text itself instead.
   */
  onNumber(): boolean {
    if (!this.sensing || this.text.length > 0) return false;
    this.text = '0';
    return true;
  }

  private cut(): void {
    const { maxCellChars } = this.context;
    if (this.text.length <= maxCellChars) return;
    this.text = this.text.slice(0, maxCellChars);
    if (this.full) this.warnCut();
  }

  private warnCut(): void {
    const address = this.ref ?? cellAddress(this.col, this.rowNumber);
    this.profiler.warnings.add(`text longer than ${this.context.maxCellChars} characters was cut`, address);
  }

  private finishCell(): void {
    if (!this.hasText) return;
    const type = this.type;
    if (type === 'str' || type === 'inlineStr') {
      this.cut();
      this.cells.push(this.col, this.text.length === 0 ? null : unescapeXstring(this.text));
      return;
    }
    const text = this.text;
    // An empty `<v>` holds no value: a formula whose result was never calculated (openpyxl writes
    // every formula as `<f>…</f><v></v>`), or a writer's placeholder. The cell is empty, exactly as
    // when `<v>` is absent: null, no warning, and (past the profile cap too) not non-blank.
    if (text.length === 0 || text.trim() === '') return;
    const { strings, dateKinds, dateSystem } = this.context;
    let value: CellValue;
    let error: string | undefined;
    if (type === undefined || type === 'n') {
      const n = Number(text);
      if (!Number.isFinite(n)) {
        value = null;
        error = 'invalid number';
      } else if (!this.full) value = 0;
      else {
        const kind = dateKinds[this.style] ?? null;
        value = kind === null ? n : (serialToIso(n, kind, dateSystem) ?? n);
      }
    } else if (type === 's') {
      const index = Number(text);
      if (!Number.isInteger(index) || index < 0 || index >= strings.length) {
        value = null;
        error = 'invalid shared string index';
      } else if (strings.isEmpty(index)) value = null;
      else if (!this.full) value = strings.isBlank(index) ? '' : 0;
      else {
        value = strings.get(index);
        if (strings.cut.has(index)) this.warnCut();
      }
    } else if (type === 'e') {
      value = null;
      error = text.trim();
    } else if (!this.full) {
      // A boolean, an ISO date or text of an unknown type: non-blank, since the text is.
      value = 0;
    } else if (type === 'b') {
      value = TRUE_FLAGS.has(text.trim().toLowerCase());
    } else if (type === 'd') {
      value = isoCell(text, dateKinds[this.style] ?? null);
    } else {
      this.cut();
      value = this.text;
    }
    this.cells.push(this.col, value, error);
  }
}
