import type { TargetField } from '../core/contract.ts';
import type { QueryTargetSpec } from './query-params.ts';
import type { CallContext, ReadFields, ResolvedRead, TargetResult } from './types.ts';
import type { TargetDeps } from './upstream/scope.ts';

export type { TargetDeps };

import type { UriShape } from './uri-shapes.ts';

/**
 * One read target, declared once: its row of every contract table and its handler. The input layer,
 * the envelope and the resource links derive their tables from the definitions
 * (src/read/targets/index.ts lists them all).
 */

/** Echo fields of the run family (step_log, foreach_items, foreach_item). */
export const RUN_ECHO = ['name', 'dagRunId', 'stepName', 'subRunId', 'item', 'bodyStepName'] as const;

type FieldValue<Field extends TargetField> = Field extends 'limit' ? number : string;

/** A validated request as a target's handler sees it: its required (and defaulted) fields are set. */
export type TargetRequest<Present extends TargetField, Optional extends TargetField> = Omit<
  ResolvedRead,
  'fields'
> & {
  fields: { [Field in Present]: FieldValue<Field> } & { [Field in Optional]?: FieldValue<Field> };
};

export interface TargetFields<Required extends TargetField, Optional extends TargetField> {
  required: readonly Required[];
  /** Every field neither required nor optional is forbidden. */
  optional: readonly Optional[];
  /** Optional fields that must come together: each one requires the other. */
  together?: readonly (readonly [Optional, Optional])[];
  /** Values applied when an optional field is absent. */
  defaults?: Readonly<Partial<Record<Optional, string>>>;
}

export interface TargetUri<Fields = ReadFields> {
  /** The `dagu://` shapes that read this target (src/read/uri-shapes.ts), each with its resource link. */
  shapes: readonly UriShape[];
  /** The canonical `uri` of a target-mode read (the contract's "Output `uri`" column), when it has one. */
  targetMode?(fields: Fields, query: string | undefined): string;
}

/** The one handler signature: the validated request, the deps, the caller's access and signal. */
export type TargetHandler<Request = ResolvedRead> = (
  request: Request,
  deps: TargetDeps,
  call: CallContext,
) => Promise<TargetResult>;

/** A definition as the tables see it (any target). */
export interface TargetDefinition {
  fields: TargetFields<TargetField, TargetField>;
  /** The query parameters a `query` may carry; a target without them takes no query. */
  query?: QueryTargetSpec;
  uri?: TargetUri;
  /** Fields echoed at the top level of a success when the caller supplied them (contract "Output"). */
  echo?: readonly TargetField[];
  /** Takes a validated request, returns the contract's `data` or throws a ReadError. */
  handle: TargetHandler;
}

/**
 * Declares a target. The handler's request is typed from `fields`: required and defaulted fields are
 * plain values. The resolver (src/read/input/resolve.ts) guarantees them before any handler runs.
 * The result keeps whether the target takes a query, so the query table's type follows the definitions.
 */
export function defineTarget<
  const Required extends TargetField = never,
  const Optional extends TargetField = never,
  const Defaulted extends Optional = never,
  const Query extends QueryTargetSpec | undefined = undefined,
>(definition: {
  fields: {
    required: readonly Required[];
    optional: readonly Optional[];
    together?: readonly (readonly [Optional, Optional])[];
    defaults?: Readonly<Record<Defaulted, string>>;
  };
  query?: Query;
  uri?: TargetUri<NoInfer<TargetRequest<Required | Defaulted, Exclude<Optional, Defaulted>>['fields']>>;
  echo?: readonly TargetField[];
  handle: TargetHandler<NoInfer<TargetRequest<Required | Defaulted, Exclude<Optional, Defaulted>>>>;
}): TargetDefinition & (Query extends QueryTargetSpec ? { query: QueryTargetSpec } : { query?: undefined }) {
  return definition as unknown as TargetDefinition &
    (Query extends QueryTargetSpec ? { query: QueryTargetSpec } : { query?: undefined });
}
