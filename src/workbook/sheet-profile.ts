/**
 * The per-sheet half of the profile: finds the header row and the data block while rows stream
 * past, keeps only the first 5000 rows that hold a value, and builds the sheet entry at the end.
 * Pure (no I/O): `profileSheet` runs it over an array of rows, which is how the rules are tested.
 */
import { cellAddress, quoteSheetName, rangeAddress } from './cells.ts';
import type { CellValue, ColumnType, DateSystem, SampleRow, WorkbookSheet, WorkbookTable } from './model.ts';
import { makeHeaders, profileColumn, ROW_KEY } from './profile.ts';
import { isBlank } from './values.ts';
import { SheetWarnings, WARNINGS_PER_SHEET } from './warnings.ts';

/** Rows that hold a value profiled per sheet. */
export const PROFILE_ROWS = 5000;
/** Rows of the block shown in `sample`. */
export const SAMPLE_ROWS = 5;

/**
 * One row's cells that carry content, in column order. The reader reuses one instance from row to
 * row, so the profiler copies what it keeps. `errors[i]` is the error text of an error cell (value null).
 */
export class RowCells {
  length = 0;
  readonly cols: number[] = [];
  readonly values: CellValue[] = [];
  readonly errors: (string | undefined)[] = [];

  reset(): void {
    this.length = 0;
  }

  push(col: number, value: CellValue, error?: string): void {
    const i = this.length++;
    this.cols[i] = col;
    this.values[i] = value;
    this.errors[i] = error;
  }
}

interface KeptRow {
  row: number;
  hidden: boolean;
  cols: number[];
  values: CellValue[];
  errors: (string | undefined)[] | undefined;
}

interface ErrorCell {
  row: number;
  col: number;
  error: string;
}

/**
 * Error cells of rows that hold no value. Such rows are not profiled rows (an error cell is null),
 * yet each of their error cells warns like any other. Kept per column, as a count and the first
 * WARNINGS_PER_SHEET cells (enough to list, since at most that many warnings are listed), so a sheet
 * of error-only rows costs no memory per row. A cell is `pending` until a row with a non-blank cell
 * follows it: only then does it lie inside the data block.
 */
class LooseErrors {
  private readonly byCol = new Map<number, { count: number; pending: number; cells: ErrorCell[] }>();
  private readonly pendingCols: number[] = [];

  add(row: number, col: number, error: string): void {
    let entry = this.byCol.get(col);
    if (entry === undefined) {
      entry = { count: 0, pending: 0, cells: [] };
      this.byCol.set(col, entry);
    }
    if (entry.pending++ === 0) this.pendingCols.push(col);
    if (entry.cells.length < WARNINGS_PER_SHEET) entry.cells.push({ row, col, error });
  }

  /** A row with a non-blank cell arrived: every pending cell is inside the block. */
  confirm(): void {
    for (const col of this.pendingCols) {
      const entry = this.byCol.get(col)!;
      entry.count += entry.pending;
      entry.pending = 0;
    }
    this.pendingCols.length = 0;
  }

  /**
   * The confirmed cells in columns `from` to `to` (inclusive) that can still be listed, in row then
   * column order, and how many more there are.
   */
  inside(from: number, to: number): { cells: ErrorCell[]; unlisted: number } {
    const cells: ErrorCell[] = [];
    let unlisted = 0;
    for (const [col, entry] of this.byCol) {
      if (col < from || col > to || entry.count === 0) continue;
      // Pending cells come after every confirmed one, so the confirmed ones kept are a prefix.
      const kept = Math.min(entry.count, entry.cells.length);
      for (let i = 0; i < kept; i++) cells.push(entry.cells[i]!);
      unlisted += entry.count - kept;
    }
    cells.sort((a, b) => a.row - b.row || a.col - b.col);
    return { cells, unlisted };
  }
}

export interface SheetProfilerOptions {
  dateSystem: DateSystem;
  maxColumns: number;
}

export interface SheetResult {
  sheet: WorkbookSheet;
  warnings: string[];
}

/**
 * Sets `key` as an own enumerable property. Header names are data: plain assignment would call
 * the `__proto__` setter (dropping the key, or even replacing the prototype) instead of creating
 * the property. JSON and structured clone keep such own properties as they are.
 */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export class SheetProfiler {
  readonly warnings: SheetWarnings;
  // Bounding box of every cell that carries content: the used range.
  private usedMinRow = 0;
  private usedMaxRow = 0;
  private usedMinCol = Number.MAX_SAFE_INTEGER;
  private usedMaxCol = -1;
  /** none: no non-empty row yet; candidate: a row with one value, pending a row with two; header: found. */
  private mode: 'none' | 'candidate' | 'header' = 'none';
  private header: KeptRow | undefined;
  private lastRow = 0;
  private blockMinCol = Number.MAX_SAFE_INTEGER;
  private blockMaxCol = -1;
  private kept: KeptRow[] = [];
  /** Error cells of the rows below the header that hold no value (while the profile is open). */
  private looseErrors = new LooseErrors();
  /** First row with a value past the profile cap (0: none); it truncates the profile if inside the block. */
  private firstDropped = 0;

  constructor(
    readonly name: string,
    private readonly options: SheetProfilerOptions,
  ) {
    this.warnings = new SheetWarnings(name);
  }

  /** False once only blank/non-blank matters (header found, profile full): the reader may skip decoding. */
  get wantsValues(): boolean {
    return this.mode !== 'header' || this.kept.length < PROFILE_ROWS;
  }

  addRow(row: number, hidden: boolean, cells: RowCells): void {
    const n = cells.length;
    if (n === 0) return;
    const { cols, values } = cells;
    let nonBlank = 0;
    let hasValue = false;
    let minCol = Number.MAX_SAFE_INTEGER;
    let maxCol = -1;
    for (let i = 0; i < n; i++) {
      const col = cols[i]!;
      if (col < this.usedMinCol) this.usedMinCol = col;
      if (col > this.usedMaxCol) this.usedMaxCol = col;
      const value = values[i]!;
      if (value === null) continue;
      hasValue = true;
      if (isBlank(value)) continue;
      nonBlank++;
      if (col < minCol) minCol = col;
      if (col > maxCol) maxCol = col;
    }
    if (this.usedMinRow === 0) this.usedMinRow = row;
    this.usedMaxRow = row;

    if (this.mode === 'none' || (this.mode === 'candidate' && nonBlank >= 2)) {
      if (nonBlank === 0) return;
      // A new header: whatever was kept under a one-value candidate lies above it.
      this.mode = nonBlank >= 2 ? 'header' : 'candidate';
      this.header = this.copy(row, hidden, cells, true);
      this.kept = [];
      this.looseErrors = new LooseErrors();
      this.firstDropped = 0;
      this.lastRow = row;
      this.blockMinCol = minCol;
      this.blockMaxCol = maxCol;
      return;
    }
    if (nonBlank > 0) {
      this.lastRow = row;
      if (minCol < this.blockMinCol) this.blockMinCol = minCol;
      if (maxCol > this.blockMaxCol) this.blockMaxCol = maxCol;
      this.looseErrors.confirm();
    }
    if (!hasValue) {
      // Not a profiled row, but its error cells (if any) still warn.
      if (this.kept.length < PROFILE_ROWS) this.noteErrors(row, cells);
      return;
    }
    if (this.kept.length < PROFILE_ROWS) this.kept.push(this.copy(row, hidden, cells, false));
    else if (this.firstDropped === 0) this.firstDropped = row;
  }

  /** Notes the error cells of a row that holds no value, in the columns a profile can still use. */
  private noteErrors(row: number, cells: RowCells): void {
    const limit = this.blockMinCol + this.options.maxColumns;
    for (let i = 0; i < cells.length; i++) {
      const error = cells.errors[i];
      if (error !== undefined && cells.cols[i]! < limit) this.looseErrors.add(row, cells.cols[i]!, error);
    }
  }

  /**
   * Copies the cells a profile can still use. The profiled columns are the first `maxColumns` of the
   * block, whose left edge only moves left, so a cell right of the current window never comes back.
   */
  private copy(row: number, hidden: boolean, cells: RowCells, all: boolean): KeptRow {
    const limit = all ? Number.MAX_SAFE_INTEGER : this.blockMinCol + this.options.maxColumns;
    const cols: number[] = [];
    const values: CellValue[] = [];
    let errors: (string | undefined)[] | undefined;
    for (let i = 0; i < cells.length; i++) {
      const col = cells.cols[i]!;
      if (col >= limit) continue;
      const error = cells.errors[i];
      if (error !== undefined) {
        errors ??= [];
        errors[cols.length] = error;
      }
      cols.push(col);
      values.push(cells.values[i]!);
    }
    return { row, hidden, cols, values, errors };
  }

  finish(extra: { hidden?: boolean; tables?: WorkbookTable[] } = {}): SheetResult {
    const name = this.name;
    const usedRange =
      this.usedMaxCol < 0
        ? `${quoteSheetName(name)}!A1:A1`
        : rangeAddress(name, this.usedMinCol, this.usedMinRow, this.usedMaxCol, this.usedMaxRow);
    const base = { name, ...(extra.hidden ? { hidden: true as const } : {}), used_range: usedRange };
    const tables = extra.tables ?? [];
    const header = this.header;
    if (header === undefined) {
      const sheet: WorkbookSheet = {
        ...base,
        range: usedRange,
        header_row: 0,
        headers: [],
        types: {},
        row_count: 0,
        columns: [],
        tables,
      };
      return { sheet, warnings: this.warnings.list() };
    }

    const first = this.blockMinCol;
    const width = this.blockMaxCol - first + 1;
    const profiledWidth = Math.min(width, this.options.maxColumns);
    if (profiledWidth < width)
      this.warnings.add(`only the first ${profiledWidth} of ${width} columns are profiled`);
    const cols = Array.from({ length: profiledWidth }, (_, i) => first + i);

    const headers = makeHeaders(cols, this.headerValues(header, first, cols), header.row, this.warnings);

    // Rows holding only blank text after the last non-blank row are outside the block.
    while (this.kept.length > 0 && this.kept[this.kept.length - 1]!.row > this.lastRow) this.kept.pop();
    const truncated = this.firstDropped !== 0 && this.firstDropped <= this.lastRow;
    const { rows, columns, hiddenRows } = this.keptColumns(first, cols);

    const types: Record<string, ColumnType> = {};
    const profiles = headers.map((headerName, i) => {
      const profile = profileColumn(headerName, cols[i]!, columns[i]!, rows, this.options.dateSystem);
      setOwn(types, headerName, profile.type);
      return profile;
    });

    const sample = sampleRows(
      header.row,
      Math.min(header.row + SAMPLE_ROWS, this.lastRow),
      headers,
      rows,
      columns,
    );

    const sheet: WorkbookSheet = {
      ...base,
      range: rangeAddress(name, first, header.row, this.blockMaxCol, this.lastRow),
      header_row: header.row,
      headers,
      types,
      row_count: this.lastRow - header.row,
      ...(hiddenRows > 0 ? { hidden_rows: hiddenRows } : {}),
      columns: profiles,
      ...(truncated ? { profile_truncated: true as const } : {}),
      tables,
      sample,
    };
    return { sheet, warnings: this.warnings.list() };
  }

  /** The header row's values over the profiled columns; its error values are warned about. */
  private headerValues(header: KeptRow, first: number, cols: number[]): CellValue[] {
    const values: CellValue[] = cols.map(() => null);
    for (let i = 0; i < header.cols.length; i++) {
      const at = header.cols[i]! - first;
      if (at < 0 || at >= cols.length) continue;
      values[at] = header.values[i]!;
      const error = header.errors?.[i];
      if (error !== undefined)
        this.warnings.add(`error value ${error}`, cellAddress(header.cols[i]!, header.row));
    }
    return values;
  }

  /**
   * Column-major copy of the kept rows, in row order. Error warnings follow row then column order,
   * those of rows that hold no value merged in (such a row is never a kept row).
   */
  private keptColumns(
    first: number,
    cols: number[],
  ): { rows: number[]; columns: CellValue[][]; hiddenRows: number } {
    const loose = this.looseErrors.inside(first, first + cols.length - 1);
    let nextLoose = 0;
    const warnLoose = (beforeRow: number) => {
      for (; nextLoose < loose.cells.length && loose.cells[nextLoose]!.row < beforeRow; nextLoose++) {
        const { row, col, error } = loose.cells[nextLoose]!;
        this.warnings.add(`error value ${error}`, cellAddress(col, row));
      }
    };
    const rows = this.kept.map((kept) => kept.row);
    const columns: CellValue[][] = cols.map(() => new Array<CellValue>(rows.length).fill(null));
    let hiddenRows = 0;
    for (let r = 0; r < this.kept.length; r++) {
      const kept = this.kept[r]!;
      if (kept.hidden) hiddenRows++;
      warnLoose(kept.row);
      for (let i = 0; i < kept.cols.length; i++) {
        const at = kept.cols[i]! - first;
        if (at < 0 || at >= cols.length) continue;
        columns[at]![r] = kept.values[i]!;
        const error = kept.errors?.[i];
        if (error !== undefined)
          this.warnings.add(`error value ${error}`, cellAddress(kept.cols[i]!, kept.row));
      }
    }
    warnLoose(Number.POSITIVE_INFINITY);
    this.warnings.addUnlisted(loose.unlisted);
    return { rows, columns, hiddenRows };
  }
}

/** The rows after the header up to `sampleEnd`, empty ones included (all null). */
function sampleRows(
  headerRow: number,
  sampleEnd: number,
  headers: string[],
  rows: number[],
  columns: CellValue[][],
): SampleRow[] {
  const sample: SampleRow[] = [];
  let next = 0;
  for (let row = headerRow + 1; row <= sampleEnd; row++) {
    while (next < rows.length && rows[next]! < row) next++;
    const at = rows[next] === row ? next : -1;
    const entry: SampleRow = { [ROW_KEY]: row };
    for (let i = 0; i < headers.length; i++) setOwn(entry, headers[i]!, at === -1 ? null : columns[i]![at]!);
    sample.push(entry);
  }
  return sample;
}

/** A row as tests and other engines hand it in: cells by 0-based column. */
export interface ProfileRow {
  row: number;
  hidden?: boolean;
  cells: ReadonlyArray<{ col: number; value: CellValue; error?: string }>;
}

/** The profile of a sheet given as rows in sheet order (pure; the reader streams instead). */
export function profileSheet(
  name: string,
  rows: Iterable<ProfileRow>,
  options: SheetProfilerOptions & { hidden?: boolean; tables?: WorkbookTable[] },
): SheetResult {
  const profiler = new SheetProfiler(name, options);
  const buffer = new RowCells();
  for (const row of rows) {
    buffer.reset();
    for (const cell of row.cells) buffer.push(cell.col, cell.value, cell.error);
    profiler.addRow(row.row, row.hidden ?? false, buffer);
  }
  return profiler.finish({ hidden: options.hidden, tables: options.tables });
}
