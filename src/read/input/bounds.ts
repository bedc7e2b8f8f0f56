/**
 * The bound on every string field, checked before any other rule looks at a value: a value longer
 * than its cap, or one that is not well-formed Unicode (a lone surrogate, which JSON's `\ud800` escape
 * can carry but no URL or file name can), is refused naming the field. The caps are far above any
 * real value and above what Dagu itself accepts (Dagu 2.x: DAG names 40 bytes, run ids 64, step names
 * 255, wiki page paths 252), so a read never meets them; they keep megabyte values out of parsing,
 * logs and upstream requests (Dagu answers a 1 MB query with HTTP 431).
 */
import { hasLoneSurrogate } from '../../core/code-points.ts';
import type { ReadInputField } from '../../core/contract.ts';

/** Every input field but `limit` (an integer) is a string. */
export type StringField = Exclude<ReadInputField, 'limit'>;

const KIB = 1024;

/** Maximum length of each string field, in UTF-16 code units (JavaScript's `length`, JSON's count). */
export const FIELD_MAX_LENGTH: Readonly<Record<StringField, number>> = Object.freeze({
  target: 256,
  name: 1024,
  dagRunId: 1024,
  subRunId: 1024,
  stepName: 1024,
  item: 4 * KIB,
  bodyStepName: 1024,
  workspace: 1024,
  prefix: 4 * KIB,
  path: 4 * KIB,
  password: 1024,
  cursor: 4 * KIB,
  query: 16 * KIB,
  search: 16 * KIB,
  uri: 32 * KIB,
});

/** What is wrong with a string field's value as sent (completing "The {field} field …"), or undefined. */
function boundProblem(field: StringField, value: string): string | undefined {
  const max = FIELD_MAX_LENGTH[field];
  if (value.length > max) return `is ${value.length} characters long; at most ${max} are accepted`;
  if (hasLoneSurrogate(value)) return 'is not well-formed Unicode (it contains a lone surrogate)';
  return undefined;
}

/** The bound problems of an input object's string fields, in field order. */
export function boundProblems(
  raw: Readonly<Record<string, unknown>>,
  keys: readonly string[],
): Array<{ field: StringField; problem: string }> {
  const found: Array<{ field: StringField; problem: string }> = [];
  for (const key of keys) {
    const value = raw[key];
    if (typeof value !== 'string' || !Object.hasOwn(FIELD_MAX_LENGTH, key)) continue;
    const field = key as StringField;
    const problem = boundProblem(field, value);
    if (problem !== undefined) found.push({ field, problem });
  }
  return found;
}
