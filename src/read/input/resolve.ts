import {
  DEPRECATED_TARGET_ALIASES,
  isReadTarget,
  READ_TARGETS,
  type ReadInputField,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../core/contract.ts';
import { merged } from '../../core/merged.ts';
import { shownValue } from '../../core/shown-value.ts';
import { ReadError, readError } from '../errors.ts';
import { definitionOf } from '../targets/index.ts';
import type { ReadFields, ReadQuery, ResolvedRead } from '../types.ts';
import { boundProblems, type StringField } from './bounds.ts';
import { FIELD_RULES, FIELD_SPECS, isReadInputField, TARGET_MODE_FIELDS, TARGET_SPECS } from './fields.ts';
import { appendQueryParam, isQueryTarget, queryValues, validateQuery } from './query.ts';
import { parseResourceUri } from './uri.ts';
import { dotSegmentField, segmentNoun, VALUE_RULES_BY_TARGET } from './value-rules.ts';

/**
 * Turns raw `dagu_read` arguments into a ResolvedRead, or throws the contract's ReadError.
 *
 * Order of checks (the first failing one wins, so errors are deterministic). A check that several
 * fields fail reports all of them: one field → `field`; several → `details.fields` and no `field`
 * (the contract's optional error field rules).
 *  1. not a plain JSON object            → invalid_tool_input, no field
 *  2. unknown fields (own `__proto__` too), in input key order → invalid_tool_input
 *  3. bounds (bounds.ts: length caps, well-formed Unicode), then types (string or null; limit
 *     integer or null), in input key order; then trimming
 *  4. mode: uri with any target-mode field → invalid_tool_input, details.fields naming `uri` and
 *     every target-mode field sent (both are causes), beside `field` when exactly one target-mode
 *     field was sent (it is the one to drop);
 *     neither target nor uri              → invalid_tool_input
 *  URI mode: 5. the URI (see parseResourceUri for its own order), then the bounds of its parts.
 *  Target mode:
 *  5. target: unsupported → unsupported_read_target (the aliases docs, doc and doc_search resolve first)
 *  6. forbidden fields, in field-table order
 *  7. required fields, in field-table order, then fields that must come together
 *  8. defaults (reference name, workspace `all`), then field values (limit range, wiki_page
 *     workspace and path, workbook extension, prefix)
 *  9. query (leading `?`, encoding, parameters), then prefix field vs prefix parameter
 * 10. a path-segment value that is `.` or `..` names nothing → resource_not_found with target and
 *     field, no uri (Dagu reads such a value as path structure, and a URI holding it
 *     would be one the gateway itself rejects)
 * 11. canonical `uri` where the contract's target table gives one in target mode.
 */

// ---- error fields -----------------------------------------------------------------------------

/** Where an error points: one field → `field`; several → `details.fields` and no `field`. */
function faultyFields(fields: readonly string[]): { field?: string; details?: { fields: string[] } } {
  return fields.length === 1 ? { field: fields[0] } : { details: { fields: [...fields] } };
}

/**
 * Where a URI-mode request that also carries target-mode fields points. `uri` and those fields are
 * all causes (the contract wants `details` when more than one field caused the failure), so `details.fields`
 * always names them, `uri` first; `field` names the one target-mode field to drop when there is
 * exactly one. Both readings of the rule, "the stray field" and "uri and the stray field", hold.
 */
function mixedModeFields(targetModeFields: readonly string[]): {
  field?: string;
  details: { fields: string[] };
} {
  const details = { fields: ['uri', ...targetModeFields] };
  return targetModeFields.length === 1 ? { field: targetModeFields[0], details } : { details };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** `The name field` or `The name and dagRunId fields` (`the …` with `lower`). */
function theFields(fields: readonly string[], lower = false): string {
  return `${lower ? 'the' : 'The'} ${listed(fields)} field${fields.length === 1 ? '' : 's'}`;
}

// ---- 1–3: shape, unknown fields, types ------------------------------------------------------

/** Effective values: trimmed, empty and null dropped; `password` exactly as supplied. */
interface Given {
  strings: Partial<Record<StringField, string>>;
  limit?: number;
  /** Keys the caller sent at all, even if null or empty (to say which field a mode error is about). */
  sent: ReadonlySet<string>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function readGiven(raw: unknown): Given {
  if (!isPlainObject(raw)) throw readError.invalidInput('Tool input must be a JSON object.');
  // Object.keys lists an own `__proto__` (JSON.parse creates one), so it is caught as unknown.
  const keys = Object.keys(raw);
  const unknown = keys.filter((key) => !isReadInputField(key));
  if (unknown.length > 0) {
    const message =
      unknown.length === 1
        ? `Unknown field ${shownValue(unknown[0] ?? '')}.`
        : `Unknown fields ${unknown.map(shownValue).join(', ')}.`;
    throw readError.invalidInput(message, merged(faultyFields(unknown), suppliedContext(raw)));
  }
  const overBound = boundProblems(raw, keys);
  if (overBound.length > 0) {
    const message = overBound.map(({ field, problem }) => `The ${field} field ${problem}.`).join(' ');
    const fields = overBound.map(({ field }) => field);
    // A uri out of bounds is a malformed URI (the contract's code for URI mode).
    const refuse = fields.length === 1 && fields[0] === 'uri' ? readError.invalidUri : readError.invalidInput;
    throw refuse(message, merged(faultyFields(fields), suppliedContext(raw)));
  }
  const given: Given = { strings: {}, sent: new Set(keys) };
  const wrongType: ReadInputField[] = [];
  for (const key of keys as ReadInputField[]) {
    const value = raw[key];
    if (value === null || value === undefined) continue;
    if (FIELD_SPECS[key].type === 'integer') {
      if (typeof value !== 'number' || !Number.isInteger(value)) wrongType.push(key);
      else given.limit = value;
      continue;
    }
    if (typeof value !== 'string') {
      wrongType.push(key);
      continue;
    }
    const effective = FIELD_SPECS[key].trim ? value.trim() : value;
    if (effective !== '') given.strings[key as StringField] = effective;
  }
  if (wrongType.length > 0) {
    throw readError.invalidInput(
      typeMessage(wrongType),
      merged(faultyFields(wrongType), suppliedContext(raw)),
    );
  }
  return given;
}

/**
 * The target (through its alias, or as supplied when unsupported) and the uri a request names, for
 * errors found before either is resolved: the contract wants both whenever they were supplied.
 */
function suppliedContext(raw: Record<string, unknown>): { target?: string; uri?: string } {
  const context: { target?: string; uri?: string } = {};
  const target = typeof raw.target === 'string' ? raw.target.trim() : '';
  if (target !== '') context.target = resolveTargetName(target) ?? target;
  const uri = typeof raw.uri === 'string' ? raw.uri.trim() : '';
  if (uri !== '') context.uri = uri;
  return context;
}

/** `The name field must be a string or null.`, or every wrong field by the type it must have. */
function typeMessage(fields: readonly ReadInputField[]): string {
  const strings = fields.filter((field) => FIELD_SPECS[field].type === 'string');
  const integers = fields.filter((field) => FIELD_SPECS[field].type === 'integer');
  const parts: string[] = [];
  if (strings.length > 0) {
    parts.push(`${theFields(strings)} must be ${strings.length === 1 ? 'a string' : 'strings'} or null`);
  }
  if (integers.length > 0) {
    const must = `must be ${integers.length === 1 ? 'an integer' : 'integers'} or null`;
    parts.push(`${theFields(integers, parts.length > 0)} ${must}`);
  }
  return `${parts.join(', and ')}.`;
}

function has(given: Given, field: ReadInputField): boolean {
  return field === 'limit' ? given.limit !== undefined : given.strings[field] !== undefined;
}

// ---- 4: mode ---------------------------------------------------------------------------------

const TARGET_NAMES = READ_TARGETS.join(', ');

export function resolveReadInput(raw: unknown): ResolvedRead {
  const given = readGiven(raw);
  const uri = given.strings.uri;
  const targetModeFields = TARGET_MODE_FIELDS.filter((field) => has(given, field));
  if (uri !== undefined) {
    if (targetModeFields.length > 0) {
      throw readError.invalidInput(
        `URI mode cannot be combined with target-mode fields (${targetModeFields.join(', ')}).`,
        merged(mixedModeFields(targetModeFields), suppliedContext(raw as Record<string, unknown>)),
      );
    }
    return resolveUriMode(uri);
  }
  if (given.strings.target === undefined) {
    if (targetModeFields.length > 0) {
      throw readError.invalidInput('The target field is required for target mode.', { field: 'target' });
    }
    const sentTarget = given.sent.has('target');
    const sentUri = given.sent.has('uri');
    const field = sentTarget && !sentUri ? 'target' : sentUri && !sentTarget ? 'uri' : undefined;
    throw readError.invalidInput(
      'Provide either target (target mode) or uri (URI mode).',
      field === undefined ? {} : { field },
    );
  }
  return resolveTargetMode(given, given.strings.target);
}

function resolveUriMode(uri: string): ResolvedRead {
  const parsed = parseResourceUri(uri);
  // The uri's parts are bounded as the same fields are in target mode.
  const overBound = boundProblems(parsed.fields as Readonly<Record<string, unknown>>, parsed.supplied);
  if (overBound.length > 0) {
    const message = overBound.map(({ field, problem }) => `The ${field} in the uri ${problem}.`).join(' ');
    throw readError.invalidUri(message, { target: parsed.target, field: 'uri', uri });
  }
  const resolved: ResolvedRead = {
    mode: 'uri',
    target: parsed.target,
    fields: parsed.fields,
    uri: parsed.uri,
    supplied: parsed.supplied,
  };
  if (parsed.query !== undefined) resolved.query = parsed.query;
  return resolved;
}

// ---- 5–10: target mode -----------------------------------------------------------------------

function resolveTargetName(supplied: string): ReadTarget | undefined {
  if (isReadTarget(supplied)) return supplied;
  return Object.hasOwn(DEPRECATED_TARGET_ALIASES, supplied) ? DEPRECATED_TARGET_ALIASES[supplied] : undefined;
}

/**
 * The target raw `dagu_read` arguments name as the read will take it: trimmed like every field, a
 * deprecated alias resolved; undefined when they name no supported target. A check made before the
 * read (the workbook scope's step-up) uses it, so both see one target for one request.
 */
export function suppliedTarget(raw: unknown): ReadTarget | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const target = (raw as Record<string, unknown>).target;
  return typeof target === 'string' ? resolveTargetName(target.trim()) : undefined;
}

/** Targets whose target-mode result carries a `uri` (exported for the consistency tests). */
export const TARGETS_WITH_TARGET_MODE_URI: readonly ReadTarget[] = READ_TARGETS.filter(
  (target) => TARGET_SPECS[target].uriInTargetMode,
);

/** Which fields the target forbids, requires, or requires together: the first rule broken throws. */
function checkPresence(given: Given, target: ReadTarget): void {
  const spec = TARGET_SPECS[target];
  const rules = FIELD_RULES[target];
  const failAll = (failed: readonly TargetField[], message: string) =>
    readError.invalidInput(message, { target, ...faultyFields(failed) });
  const forbidden = TARGET_FIELDS.filter((field) => rules[field] === 'forbidden' && has(given, field));
  if (forbidden.length > 0) {
    const verb = forbidden.length === 1 ? 'is' : 'are';
    throw failAll(forbidden, `${theFields(forbidden)} ${verb} not allowed for target ${target}.`);
  }
  const missing = spec.required.filter((field) => !has(given, field));
  if (missing.length > 0) {
    const verb = missing.length === 1 ? 'is' : 'are';
    throw failAll(missing, `${theFields(missing)} ${verb} required for target ${target}.`);
  }
  for (const [a, b] of spec.together) {
    if (has(given, a) && !has(given, b))
      throw failField(target, b, `The ${b} field is required with ${a} for target ${target}.`);
    if (has(given, b) && !has(given, a))
      throw failField(target, a, `The ${a} field is required with ${b} for target ${target}.`);
  }
}

function failField(target: ReadTarget, field: TargetField, message: string): ReadError {
  return readError.invalidInput(message, { target, field });
}

/** The given fields with the target's defaults filled in, each checked against its value rules. */
function fieldsOf(given: Given, target: ReadTarget): ReadFields {
  const spec = TARGET_SPECS[target];
  const fields: ReadFields = {};
  for (const field of TARGET_FIELDS) {
    if (field === 'limit') {
      if (given.limit !== undefined) fields.limit = given.limit;
      continue;
    }
    const value = given.strings[field] ?? spec.defaults[field];
    if (value !== undefined) fields[field] = value;
  }
  for (const rule of VALUE_RULES_BY_TARGET[target]) {
    const value = fields[rule.field];
    if (value === undefined) continue;
    const problem = rule.problem(value);
    if (problem !== undefined) {
      const message = rule.message?.(value) ?? `The ${rule.field} field ${problem} for target ${target}.`;
      throw failField(target, rule.field, message);
    }
  }
  return fields;
}

/** The query of a target-mode read: the query field, and the Wiki prefix field as its `prefix`. */
function targetModeQuery(target: ReadTarget, fields: ReadFields): ReadQuery | undefined {
  let query: ReadQuery | undefined;
  if (fields.query !== undefined && isQueryTarget(target)) {
    query = validateQuery(target, fields.query, { mode: 'target' });
  }
  if (target === 'wiki' && fields.prefix !== undefined) {
    if (queryValues(query, 'prefix').length > 0) {
      throw failField(
        target,
        'prefix',
        'Give the Wiki prefix either as the prefix field or as a query parameter, not both.',
      );
    }
    // The prefix narrows the listing, so it belongs in the URI that names this listing.
    query = appendQueryParam(query, 'prefix', fields.prefix);
  }
  return query;
}

function resolveTargetMode(given: Given, supplied: string): ResolvedRead {
  const target = resolveTargetName(supplied);
  if (target === undefined) {
    throw new ReadError({
      code: 'unsupported_read_target',
      message: `Unsupported read target ${shownValue(supplied)}; supported targets: ${TARGET_NAMES}.`,
      target: supplied,
      field: 'target',
    });
  }
  checkPresence(given, target);
  const fields = fieldsOf(given, target);
  const query = targetModeQuery(target, fields);

  const dotted = dotSegmentField(target, fields);
  if (dotted !== undefined) {
    const value = fields[dotted] as string;
    throw readError.notFound(`The ${segmentNoun(target, dotted)} ${shownValue(value)} does not exist.`, {
      target,
      field: dotted,
    });
  }

  // What the caller gave, as opposed to defaults (`workspace: all`, `name: authoring`): echo fields.
  const suppliedFields = TARGET_FIELDS.filter((field) => has(given, field));
  const resolved: ResolvedRead = { mode: 'target', target, fields, supplied: suppliedFields };
  if (query !== undefined) resolved.query = query;
  // Every required and defaulted field is set by now: the definition's builder may rely on them.
  const uri = definitionOf(target).uri;
  if (uri?.targetMode !== undefined) resolved.uri = uri.targetMode(fields, query?.raw);
  return resolved;
}
