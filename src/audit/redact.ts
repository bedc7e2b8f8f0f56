import { cutToCodePoints, wellFormed } from '../core/code-points.ts';
import { READ_INPUT_FIELDS, type ReadInputField } from '../core/contract.ts';

/**
 * Fields read specially: `path` goes to `path` or `workbookPath`, `uri` and `query` keep their query
 * keys only, `limit` is a number, and `search`, `cursor` and `password` become flags.
 */
const REDUCED_FIELDS = ['path', 'uri', 'query', 'limit', 'search', 'cursor', 'password'] as const;
type TextField = Exclude<ReadInputField, (typeof REDUCED_FIELDS)[number]>;

/** Input fields copied as text (trimmed and cut); every other field is reduced below. */
const TEXT_FIELDS = READ_INPUT_FIELDS.filter(
  (field): field is TextField => !(REDUCED_FIELDS as readonly string[]).includes(field),
);

/**
 * What the audit log may say about a call's arguments. Built from the raw, unvalidated tool arguments,
 * so it must cope with anything: only known fields are read, only strings are copied (trimmed and cut),
 * and secrets or free text are reduced to flags: `password`, `search` and `cursor` values never appear,
 * and a `query` string contributes its keys only.
 */
export type AuditArgumentFields = { [Field in TextField]?: string } & {
  uri?: string;
  /** A wiki page path or prefix (a workbook's path goes to `workbookPath`). */
  path?: string;
  workbookPath?: string;
  limit?: number;
  hasSearch?: true;
  hasCursor?: true;
  hasPassword?: true;
  /** Sorted, distinct query parameter names; `<invalid>` when the query cannot be parsed. */
  queryKeys?: string[];
};

export const MAX_AUDIT_TEXT = 256;

/**
 * Trimmed, cut to `max` code points and with any unpaired surrogate the caller sent written as U+FFFD;
 * undefined when empty or not a string.
 */
export function auditText(value: unknown, max = MAX_AUDIT_TEXT): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  return wellFormed(cutToCodePoints(trimmed, max));
}

/** Parameter names of a URL query (no leading `?`), sorted and distinct; values are dropped, never recorded. */
export function queryKeysOf(query: string): string[] {
  try {
    const keys = new Set<string>();
    for (const part of query.split('&')) {
      if (part === '') continue;
      const [name = '', ...value] = part.replace(/\+/g, ' ').split('=');
      decodeURIComponent(value.join('=')); // a malformed value makes the whole query unparsable, as in Go
      keys.add(auditText(decodeURIComponent(name), 64) ?? '');
    }
    return [...keys].sort();
  } catch {
    return ['<invalid>'];
  }
}

/** A `dagu://` URI without its query values and fragment: `{ uri, queryKeys }`. */
export function splitAuditUri(uri: string): { uri: string; queryKeys?: string[] } {
  const hash = uri.indexOf('#');
  const withoutFragment = hash === -1 ? uri : uri.slice(0, hash);
  const question = withoutFragment.indexOf('?');
  if (question === -1) return { uri: auditText(withoutFragment) ?? '' };
  return {
    uri: auditText(withoutFragment.slice(0, question)) ?? '',
    queryKeys: queryKeysOf(withoutFragment.slice(question + 1)),
  };
}

const present = (value: unknown) => value !== undefined && value !== null && value !== '';

/** The audit-safe digest of raw `dagu_read` arguments. Non-object arguments yield `{}`. */
export function redactArguments(raw: unknown): AuditArgumentFields {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const args = raw as Record<string, unknown>;
  const fields: AuditArgumentFields = {};
  for (const key of TEXT_FIELDS) {
    const value = auditText(args[key]);
    if (value !== undefined) fields[key] = value;
  }
  const path = auditText(args.path);
  if (path !== undefined) {
    if (fields.target === 'workbook') fields.workbookPath = path;
    else fields.path = path;
  }
  if (typeof args.uri === 'string') {
    const split = splitAuditUri(args.uri);
    if (split.uri !== '') fields.uri = split.uri;
    if (split.queryKeys) fields.queryKeys = split.queryKeys;
  }
  if (typeof args.query === 'string' && args.query.trim() !== '') {
    fields.queryKeys = queryKeysOf(args.query.trim().replace(/^\?/, ''));
  }
  if (typeof args.limit === 'number' && Number.isFinite(args.limit)) fields.limit = args.limit;
  if (present(args.search)) fields.hasSearch = true;
  if (present(args.cursor)) fields.hasCursor = true;
  if (present(args.password)) fields.hasPassword = true;
  return fields;
}
