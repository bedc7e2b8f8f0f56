/**
 * The workbook target's data model (docs/contract.md, "Target contracts"; semantics in
 * docs/workbook-profile.md).
 */

import type { GatewayConfig } from '../config.ts';

export type DateSystem = '1900' | '1904';

/** A typed cell value as the profile reports it: dates and times are already ISO text. */
export type CellValue = string | number | boolean | null;

export type ColumnType = 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'datetime';

export interface OddCell {
  cell: string;
  text: string;
}

export interface ColumnProfile {
  name: string;
  type: ColumnType;
  filled: number;
  blank: number;
  distinct: number;
  values?: string[];
  min?: number | string;
  max?: number | string;
  odd?: number;
  odd_cells?: OddCell[];
}

/** A typed row keyed by header, plus `_row`, its 1-based sheet row number. */
export type SampleRow = { [header: string]: CellValue };

export interface WorkbookTable {
  name: string;
  range: string;
}

export interface WorkbookSheet {
  name: string;
  hidden?: true;
  used_range: string;
  range: string;
  header_row: number;
  headers: string[];
  types: Record<string, ColumnType>;
  row_count: number;
  hidden_rows?: number;
  columns: ColumnProfile[];
  profile_truncated?: true;
  tables: WorkbookTable[];
  sample?: SampleRow[];
}

export interface NamedRange {
  name: string;
  refers_to: string;
  scope: string;
}

export interface WorkbookModel {
  path: string;
  date_system: DateSystem;
  sheets: WorkbookSheet[];
  named_ranges: NamedRange[];
  warnings: string[];
}

/** The bounds one read runs under: the workbook settings without the roots and pool settings. */
export type WorkbookBounds = Omit<
  GatewayConfig['workbook'],
  'roots' | 'maxConcurrent' | 'maxPerCaller' | 'queueMax' | 'queueWaitMs' | 'workerHeapMb'
>;
