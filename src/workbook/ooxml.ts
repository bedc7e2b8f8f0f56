/**
 * The package parts around the sheets (ECMA-376 Part 1 §18 and OPC, Part 2): relationships, the
 * workbook part (sheets, visibility, defined names, date system), styles (which cell formats are
 * dates) and tables. Both the transitional and the strict namespaces are accepted: relationship
 * types are matched by their last path segment.
 */
import type { DateKind } from './dates.ts';
import { WorkbookFormatError } from './errors.ts';
import { classifyNumFmt } from './numfmt.ts';
import { attr, parseXml, prefixedAttr } from './xml.ts';

export interface Relationship {
  id: string;
  /** Last segment of the relationship type URI: `officeDocument`, `worksheet`, `table`, … */
  type: string;
  /** Resolved part name (no leading `/`), or the raw target for external relationships. */
  target: string;
  external: boolean;
}

/** `xl/workbook.xml` → `xl/_rels/workbook.xml.rels`. */
export function relsPartFor(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

/** Resolves a relationship target against the folder of its source part. */
export function resolveTarget(sourcePart: string, target: string): string {
  let decoded = target;
  try {
    decoded = decodeURIComponent(target);
  } catch {
    // Keep the raw target: an undecodable name simply won't be found.
  }
  const absolute = decoded.startsWith('/');
  const base = absolute ? [] : sourcePart.split('/').slice(0, -1);
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') base.pop();
    else base.push(segment);
  }
  return base.join('/');
}

export function parseRels(xml: string, sourcePart: string, relsPart: string): Relationship[] {
  const rels: Relationship[] = [];
  parseXml(xml, relsPart, {
    open(local, tag) {
      if (local !== 'Relationship') return;
      const id = attr(tag, 'Id');
      const type = attr(tag, 'Type');
      const target = attr(tag, 'Target');
      if (id === undefined || type === undefined || target === undefined) return;
      const external = attr(tag, 'TargetMode')?.toLowerCase() === 'external';
      rels.push({
        id,
        type: type.slice(type.lastIndexOf('/') + 1),
        target: external ? target : resolveTarget(sourcePart, target),
        external,
      });
    },
  });
  return rels;
}

export type SheetState = 'visible' | 'hidden' | 'veryHidden';

export interface SheetEntry {
  name: string;
  relId: string | undefined;
  state: SheetState;
}

export interface DefinedName {
  name: string;
  refersTo: string;
  localSheetId: number | undefined;
}

export interface WorkbookInfo {
  sheets: SheetEntry[];
  definedNames: DefinedName[];
  date1904: boolean;
}

const TRUE_VALUES = new Set(['1', 'true', 'on']);

export function parseWorkbook(xml: string, part: string): WorkbookInfo {
  const info: WorkbookInfo = { sheets: [], definedNames: [], date1904: false };
  let sawWorkbook = false;
  let name: { name: string; localSheetId: number | undefined; text: string } | undefined;
  parseXml(xml, part, {
    open(local, tag) {
      if (local === 'workbook') sawWorkbook = true;
      else if (local === 'workbookPr') {
        info.date1904 = TRUE_VALUES.has((attr(tag, 'date1904') ?? '').toLowerCase());
      } else if (local === 'sheet') {
        const state = attr(tag, 'state');
        info.sheets.push({
          name: attr(tag, 'name') ?? '',
          relId: prefixedAttr(tag, 'id'),
          state: state === 'hidden' || state === 'veryHidden' ? state : 'visible',
        });
      } else if (local === 'definedName') {
        const scope = attr(tag, 'localSheetId');
        const index = scope === undefined ? Number.NaN : Number(scope);
        name = {
          name: attr(tag, 'name') ?? '',
          localSheetId: Number.isInteger(index) && index >= 0 ? index : undefined,
          text: '',
        };
      }
    },
    text(text) {
      if (name !== undefined) name.text += text;
    },
    close(local) {
      if (local === 'definedName' && name !== undefined) {
        info.definedNames.push({ name: name.name, refersTo: name.text, localSheetId: name.localSheetId });
        name = undefined;
      }
    },
  });
  if (!sawWorkbook) throw new WorkbookFormatError(`${part} is not a workbook part`);
  return info;
}

/**
 * For each cell format (`cellXfs` index, the `s` attribute of a cell) whether numbers under it are
 * dates, times or both. Custom codes come from `numFmts`; other ids are built-ins. Only the
 * `<numFmt>` children of the top-level `<numFmts>` define codes: a differential format
 * (`<dxfs><dxf><numFmt>`, used by conditional formatting and table styles) carries its own
 * `numFmtId`, often reusing an id from `numFmts`, and must not redefine a cell format's code.
 */
export function parseStyles(xml: string, part: string): (DateKind | null)[] {
  const codes = new Map<number, string>();
  const xfIds: number[] = [];
  // Depth of the open element (the `<styleSheet>` root is 1): `numFmts` and `cellXfs` count only as its children.
  let depth = 0;
  let inNumFmts = false;
  let inCellXfs = false;
  parseXml(xml, part, {
    open(local, tag) {
      depth++;
      if (depth === 2) {
        inNumFmts = local === 'numFmts';
        inCellXfs = local === 'cellXfs';
      } else if (depth === 3 && inNumFmts && local === 'numFmt') {
        const id = Number(attr(tag, 'numFmtId'));
        const code = attr(tag, 'formatCode');
        if (Number.isInteger(id) && code !== undefined) codes.set(id, code);
      } else if (depth === 3 && inCellXfs && local === 'xf') {
        xfIds.push(Number(attr(tag, 'numFmtId') ?? '0'));
      }
    },
    close() {
      if (depth === 2) inNumFmts = inCellXfs = false;
      depth--;
    },
  });
  return xfIds.map((id) => (Number.isInteger(id) ? classifyNumFmt(id, codes.get(id)) : null));
}

export interface TableInfo {
  name: string;
  ref: string;
}

export function parseTable(xml: string, part: string): TableInfo | undefined {
  let table: TableInfo | undefined;
  parseXml(xml, part, {
    open(local, tag) {
      if (local !== 'table' || table !== undefined) return;
      const ref = attr(tag, 'ref');
      const name = attr(tag, 'displayName') ?? attr(tag, 'name');
      if (ref !== undefined && name !== undefined) table = { name, ref };
    },
  });
  return table;
}
