/**
 * Field-by-field comparison of two `dagu_read` `data` values (the gateway's and Dagu's own), and the
 * table of accepted differences in docs/dagu-differences.md that the differential test checks them
 * against.
 */
import { readFileSync } from 'node:fs';

export type DifferenceKind = 'gateway-only' | 'dagu-only' | 'value' | 'format';

/** One difference at a normalised path: array positions are written `[]`, object keys `.key`. */
export interface Difference {
  target: string;
  path: string;
  kind: DifferenceKind;
  gateway?: unknown;
  dagu?: unknown;
}

/** Item fields that identify an element of an array, tried in this order to pair elements. */
const IDENTITY_KEYS = ['dagRunId', 'stepName', 'id', 'name', 'uri'] as const;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The identity key every element of both arrays carries as a string, if there is one. */
function identityKey(left: unknown[], right: unknown[]): string | undefined {
  const all = [...left, ...right];
  if (all.length === 0 || !all.every(isObject)) return undefined;
  return IDENTITY_KEYS.find((key) =>
    all.every((item) => typeof (item as Record<string, unknown>)[key] === 'string'),
  );
}

/** Every difference between `gateway` and `dagu`, one per path and kind (the first example kept). */
export function compareData(target: string, gateway: unknown, dagu: unknown): Difference[] {
  const found = new Map<string, Difference>();
  const add = (raw: Difference) => {
    const difference = { ...raw, path: treePath(raw.path) };
    const key = `${difference.path}\u0000${difference.kind}`;
    if (!found.has(key)) found.set(key, difference);
  };
  const walk = (path: string, left: unknown, right: unknown) => {
    if (isObject(left) && isObject(right)) {
      for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
        const at = `${path}.${key}`;
        if (!(key in right)) add({ target, path: at, kind: 'gateway-only', gateway: left[key] });
        else if (!(key in left)) add({ target, path: at, kind: 'dagu-only', dagu: right[key] });
        else walk(at, left[key], right[key]);
      }
      return;
    }
    if (Array.isArray(left) && Array.isArray(right)) {
      const at = `${path}[]`;
      const key = identityKey(left, right);
      if (key === undefined) {
        if (left.length !== right.length)
          add({ target, path: at, kind: 'value', gateway: left.length, dagu: right.length });
        for (let i = 0; i < Math.min(left.length, right.length); i++) walk(at, left[i], right[i]);
        return;
      }
      const byKey = (items: unknown[]) =>
        new Map(items.map((item) => [(item as Record<string, string>)[key] as string, item]));
      const [ours, theirs] = [byKey(left), byKey(right)];
      for (const [id, item] of ours) {
        if (theirs.has(id)) walk(at, item, theirs.get(id));
        else add({ target, path: at, kind: 'gateway-only', gateway: id });
      }
      for (const id of theirs.keys())
        if (!ours.has(id)) add({ target, path: at, kind: 'dagu-only', dagu: id });
      return;
    }
    if (Object.is(left, right)) return;
    if (
      typeof left === 'string' &&
      typeof right === 'string' &&
      RFC3339.test(left) &&
      RFC3339.test(right) &&
      Date.parse(left) === Date.parse(right)
    ) {
      add({ target, path, kind: 'format', gateway: left, dagu: right });
      return;
    }
    add({ target, path, kind: 'value', gateway: left, dagu: right });
  };
  walk('data', gateway, dagu);
  return [...found.values()];
}

/** A tree's nesting depth is not a difference of its own: `children[].children[]…` becomes `children[]`. */
function treePath(path: string): string {
  return path.replace(/(\.children\[\])+/g, '.children[]');
}

/** A row of the accepted-differences table. */
export interface AcceptedDifference {
  target: string;
  path: string;
  kind: DifferenceKind;
  /** The clause of Spec 021 that decides the difference, quoted. */
  clause: string;
}

const KINDS: readonly DifferenceKind[] = ['gateway-only', 'dagu-only', 'value', 'format'];

const cell = (text: string) => text.trim().replace(/^`|`$/g, '');

/**
 * Reads the table of accepted differences: every row after the header `| target | path | kind | …`,
 * with the target, the path and the kind in backticks and the clause quoted in the fourth cell.
 */
export function readAcceptedDifferences(markdownFile: string): AcceptedDifference[] {
  const lines = readFileSync(markdownFile, 'utf8').split('\n');
  const header = lines.findIndex((line) => /^\|\s*target\s*\|\s*path\s*\|\s*kind\s*\|/.test(line));
  if (header < 0) throw new Error(`${markdownFile}: no "| target | path | kind |" table`);
  const rows: AcceptedDifference[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').slice(1, -1);
    const [target, path, kind, clause] = [cells[0], cells[1], cells[2], cells[3]].map((text) =>
      cell(text ?? ''),
    );
    if (!KINDS.includes(kind as DifferenceKind)) throw new Error(`${markdownFile}: unknown kind in: ${line}`);
    rows.push({ target: target ?? '', path: path ?? '', kind: kind as DifferenceKind, clause: clause ?? '' });
  }
  return rows;
}

/** The text between the first pair of double quotes (straight or curly) in a clause cell. */
export function quotedClause(clause: string): string | undefined {
  return /["“]([^"”]+)["”]/.exec(clause)?.[1];
}

export const differenceKey = (difference: Pick<Difference, 'target' | 'path' | 'kind'>) =>
  `${difference.target} ${difference.path} ${difference.kind}`;
