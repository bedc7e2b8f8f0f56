/**
 * The building blocks of a target's query parameters (the contract's "Query handling" table): target
 * definitions declare their parameters with these; src/read/input/query.ts validates against them.
 */

export type ValueRule =
  | { kind: 'integer'; min: number; max?: number }
  | { kind: 'unixSeconds' }
  | { kind: 'oneOf'; values: readonly string[] }
  | { kind: 'text' }
  | { kind: 'labels' }
  | { kind: 'wikiPagePrefix' };

export interface QueryParamSpec {
  rule: ValueRule;
  repeatable: boolean;
}

export interface QueryTargetSpec {
  params: Readonly<Record<string, QueryParamSpec>>;
  /** Parameters of which at most one may be given (step_log positioning). */
  atMostOneOf?: readonly string[];
  /** `param` may be combined with `partner` but with no other member of `atMostOneOf`. */
  onlyWith?: { param: string; partner: string };
}

export const once = (rule: ValueRule): QueryParamSpec => ({ rule, repeatable: false });
export const int = (min: number, max?: number): QueryParamSpec =>
  once(max === undefined ? { kind: 'integer', min } : { kind: 'integer', min, max });
export const oneOf = (...values: string[]): QueryParamSpec => once({ kind: 'oneOf', values });
export const TEXT = once({ kind: 'text' });
export const LABELS = once({ kind: 'labels' });
export const LOG_LINES = int(1, 10000);
