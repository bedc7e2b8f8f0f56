import type { ReadTarget } from '../../core/contract.ts';
import { shownValue } from '../../core/shown-value.ts';
import { type ReadError, readError } from '../errors.ts';
import type { QueryTargetSpec, ValueRule } from '../query-params.ts';
import { TARGET_DEFINITIONS } from '../targets/index.ts';
import type { ReadQuery } from '../types.ts';
import { wikiPagePathProblem } from './page-path.ts';
import { percentDecode, queryEscape } from './percent.ts';

/**
 * The contract's "Query handling" table, derived from the target definitions, and a Go
 * `url.ParseQuery`-compatible validator.
 */

type Definitions = typeof TARGET_DEFINITIONS;

/** The targets that take a `query` (their definition declares its parameters). */
export type QueryTarget = {
  [Target in ReadTarget]: Definitions[Target] extends { query: QueryTargetSpec } ? Target : never;
}[ReadTarget];

export const QUERY_TARGETS: readonly QueryTarget[] = (Object.keys(TARGET_DEFINITIONS) as ReadTarget[]).filter(
  (target): target is QueryTarget => TARGET_DEFINITIONS[target].query !== undefined,
);

export const QUERY_TABLE: Readonly<Record<QueryTarget, QueryTargetSpec>> = Object.freeze(
  Object.fromEntries(QUERY_TARGETS.map((target) => [target, TARGET_DEFINITIONS[target].query])),
) as Record<QueryTarget, QueryTargetSpec>;

const QUERY_TARGET_SET: ReadonlySet<string> = new Set(QUERY_TARGETS);

export function isQueryTarget(target: ReadTarget): target is QueryTarget {
  return QUERY_TARGET_SET.has(target);
}

// ---- value rules, compiled once -------------------------------------------------------------

/** Returns what the value must be when it fails, `undefined` when it passes. */
type ValueCheck = (value: string) => string | undefined;

// Go's strconv.Atoi/ParseInt on 64-bit: optional sign, decimal digits, int64 range.
const INTEGER = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function toInt64(value: string): bigint | undefined {
  if (!INTEGER.test(value)) return undefined;
  const n = BigInt(value);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function compileRule(rule: ValueRule): ValueCheck {
  switch (rule.kind) {
    case 'integer': {
      const { min, max } = rule;
      const expected =
        max === undefined
          ? `must be an integer greater than or equal to ${min}`
          : `must be an integer from ${min} through ${max}`;
      const low = BigInt(min);
      const high = max === undefined ? INT64_MAX : BigInt(max);
      return (value) => {
        const n = toInt64(value);
        return n === undefined || n < low || n > high ? expected : undefined;
      };
    }
    case 'unixSeconds':
      return (value) => (toInt64(value) === undefined ? 'must be a Unix timestamp in seconds' : undefined);
    case 'oneOf': {
      const allowed = new Set(rule.values);
      const expected = `must be one of ${rule.values.join(', ')}`;
      return (value) => (allowed.has(value) ? undefined : expected);
    }
    case 'text':
      return () => undefined; // emptiness is checked for every parameter before its rule
    case 'labels':
      return (value) =>
        value.split(',').some((label) => label.trim() === '')
          ? 'must be a comma-separated list of non-empty labels'
          : undefined;
    case 'wikiPagePrefix':
      return (value) => {
        const problem = wikiPagePathProblem(value);
        return problem === undefined ? undefined : `must be a valid Wiki page path prefix (${problem})`;
      };
  }
}

interface CompiledParam {
  repeatable: boolean;
  check: ValueCheck;
}

interface CompiledTarget {
  // A Map, not an object: parameter names such as `__proto__` or `constructor` must miss.
  params: ReadonlyMap<string, CompiledParam>;
  supported: string;
  spec: QueryTargetSpec;
}

const COMPILED: Readonly<Record<QueryTarget, CompiledTarget>> = (() => {
  const out = {} as Record<QueryTarget, CompiledTarget>;
  for (const target of QUERY_TARGETS) {
    const spec = QUERY_TABLE[target];
    const params = new Map<string, CompiledParam>();
    for (const [name, param] of Object.entries(spec.params)) {
      params.set(name, { repeatable: param.repeatable, check: compileRule(param.rule) });
    }
    out[target] = { params, supported: [...params.keys()].join(', '), spec };
  }
  return out;
})();

// ---- parsing --------------------------------------------------------------------------------

/**
 * Splits and decodes a query string like Go's `url.ParseQuery`: `&` separates pairs, empty pairs
 * are skipped, a pair without `=` has an empty value, `+` is a space, and a `;` anywhere or an
 * invalid `%` escape makes the whole query malformed (`undefined`).
 */
export function parseUrlQuery(raw: string): Array<[string, string]> | undefined {
  const pairs: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    if (part.includes(';')) return undefined;
    const eq = part.indexOf('=');
    const key = percentDecode(eq < 0 ? part : part.slice(0, eq), true);
    const value = percentDecode(eq < 0 ? '' : part.slice(eq + 1), true);
    if (key === undefined || value === undefined) return undefined;
    pairs.push([key, value]);
  }
  return pairs;
}

/** Where a query came from decides the error: the `query` field, or the query part of `uri`. */
export type QuerySource = { mode: 'target' } | { mode: 'uri'; uri: string };

export function queryError(target: ReadTarget, source: QuerySource, message: string): ReadError {
  return source.mode === 'uri'
    ? readError.invalidUri(message, { target, field: 'uri', uri: source.uri })
    : readError.invalidInput(message, { target, field: 'query' });
}

// RFC 3986 `query = *( pchar / "/" / "?" )`: unreserved, sub-delims, `:`, `@`, `/`, `?` and `%`
// (whose escapes parseUrlQuery checks). Everything else must arrive percent-encoded.
const QUERY_CHARACTER = /[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]/;

/** The first character of `raw` that cannot appear in a URI query, described for a message. */
export function badQueryCharacter(raw: string): string | undefined {
  for (const ch of raw) {
    if (QUERY_CHARACTER.test(ch)) continue;
    const code = ch.codePointAt(0) ?? 0;
    if (ch === ' ') return 'a space';
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      return `a control character (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
    }
    return `the character ${JSON.stringify(ch)}`;
  }
  return undefined;
}

/**
 * Validates an effective (non-empty) query string for `target`. Checks, in this order: leading `?`,
 * characters (only those a URI query may hold, so a returned URI is always a valid URI), URL
 * encoding, then per parameter in order of appearance: supported name, repetition, empty value,
 * surrounding whitespace, value rule; finally the cross-parameter rules (step_log positioning).
 * Values are used exactly as decoded, never trimmed: `tail=%205` and `page=+5` (`+` is a space) fail.
 */
export function validateQuery(target: QueryTarget, raw: string, source: QuerySource): ReadQuery {
  const fail = (message: string) => queryError(target, source, message);
  if (raw.startsWith('?')) throw fail("The query must not start with '?'.");
  const bad = badQueryCharacter(raw);
  if (bad !== undefined) {
    throw fail(
      `The query contains ${bad}, which cannot appear in a URI query; percent-encode it (for example a space as %20).`,
    );
  }
  const pairs = parseUrlQuery(raw);
  if (pairs === undefined) {
    throw fail("The query has malformed URL encoding: an invalid '%' escape or a ';' separator.");
  }
  const compiled = COMPILED[target];
  const seen = new Set<string>();
  const params: Array<readonly [string, string]> = [];
  for (const [key, value] of pairs) {
    const param = compiled.params.get(key);
    if (param === undefined) {
      throw fail(
        `The query parameter ${shownValue(key)} is not supported for target ${target}. Supported: ${compiled.supported}.`,
      );
    }
    if (seen.has(key) && !param.repeatable) throw fail(`The query parameter ${key} must not be repeated.`);
    seen.add(key);
    if (value.trim() === '') throw fail(`The query parameter ${key} must not be empty or blank.`);
    if (value.trim() !== value) {
      throw fail(`The query parameter ${key} must not have leading or trailing whitespace.`);
    }
    const expected = param.check(value);
    if (expected !== undefined) throw fail(`The query parameter ${key} ${expected} for target ${target}.`);
    params.push([key, value]);
  }
  const { atMostOneOf, onlyWith } = compiled.spec;
  if (atMostOneOf !== undefined) {
    const given = atMostOneOf.filter((name) => seen.has(name));
    if (given.length > 1) {
      throw fail(
        `Use at most one of ${atMostOneOf.join(', ')} for target ${target} (got ${given.join(', ')}).`,
      );
    }
    if (onlyWith !== undefined && seen.has(onlyWith.param)) {
      const clash = given.find((name) => name !== onlyWith.partner);
      if (clash !== undefined) {
        throw fail(
          `The query parameter ${onlyWith.param} may be combined only with ${onlyWith.partner} for target ${target}, not with ${clash}.`,
        );
      }
    }
  }
  return { raw, params };
}

/** Every value of `name` in a validated query, in order. */
export function queryValues(query: ReadQuery | undefined, name: string): string[] {
  if (query === undefined) return [];
  const values: string[] = [];
  for (const [key, value] of query.params) if (key === name) values.push(value);
  return values;
}

/** Appends one parameter, escaped like Go's `url.QueryEscape`, keeping the given query as is. */
export function appendQueryParam(query: ReadQuery | undefined, name: string, value: string): ReadQuery {
  const pair = `${queryEscape(name)}=${queryEscape(value)}`;
  if (query === undefined || query.raw === '') return { raw: pair, params: [[name, value]] };
  const separator = query.raw.endsWith('&') ? '' : '&';
  return { raw: `${query.raw}${separator}${pair}`, params: [...query.params, [name, value]] };
}
