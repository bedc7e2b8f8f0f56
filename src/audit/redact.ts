/**
 * What the audit log may say about a call's arguments. Built from the raw, unvalidated tool arguments,
 * so it must cope with anything: only known fields are read, only strings are copied (trimmed and cut),
 * and secrets or free text are reduced to flags: `password`, `search` and `cursor` values never appear,
 * and a `query` string contributes its keys only.
 */
export interface AuditArgumentFields {
  target?: string;
  uri?: string;
  name?: string;
  dagRunId?: string;
  subRunId?: string;
  stepName?: string;
  item?: string;
  bodyStepName?: string;
  workspace?: string;
  /** A wiki page path or prefix (a workbook's path goes to `workbookPath`). */
  path?: string;
  prefix?: string;
  workbookPath?: string;
  limit?: number;
  hasSearch?: true;
  hasCursor?: true;
  hasPassword?: true;
  /** Sorted, distinct query parameter names; `<invalid>` when the query cannot be parsed. */
  queryKeys?: string[];
}

export const MAX_AUDIT_TEXT = 256;

/** Trimmed and cut to `max` characters (never splitting a surrogate pair); undefined when empty or not a string. */
export function auditText(value: unknown, max = MAX_AUDIT_TEXT): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  return trimmed.length <= max ? trimmed : Array.from(trimmed).slice(0, max).join('');
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

const TEXT_FIELDS = [
  'target',
  'name',
  'dagRunId',
  'subRunId',
  'stepName',
  'item',
  'bodyStepName',
  'workspace',
  'prefix',
] as const;

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
