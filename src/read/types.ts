import type { AccessPolicy } from '../core/access.ts';
import type { ReadTarget, TargetField } from '../core/contract.ts';
import type { CallSignal } from '../core/deadline.ts';

/** Effective (trimmed, non-empty) input fields after validation. `password` is kept exactly as supplied. */
export type ReadFields = { [Field in Exclude<TargetField, 'limit'>]?: string } & { limit?: number };

/** A validated query: the raw string (echoed in URIs as given) and its parameters in order. */
export interface ReadQuery {
  raw: string;
  params: ReadonlyArray<readonly [string, string]>;
}

/**
 * A request that passed every input rule of the contract. Target handlers receive only this:
 * fields from URI mode are already decoded from the URI path into `fields`.
 */
export interface ResolvedRead {
  mode: 'target' | 'uri';
  target: ReadTarget;
  fields: ReadFields;
  query?: ReadQuery;
  /** The canonical `dagu://` URI of the read when the target has one (returned as the result's `uri`). */
  uri?: string;
  /** Fields the caller supplied, as opposed to defaults (`workspace: all`, `name: authoring`); drives echo fields. */
  supplied?: ReadonlyArray<keyof ReadFields>;
}

/** Per-call context handed from the transport adapters to the read service. */
export interface CallContext {
  access: AccessPolicy;
  signal?: CallSignal;
  /** Who calls (identity kind and id): the workbook pool shares its workers fairly between callers. */
  caller?: string;
}

/** What a target handler returns; `upstreamStatus` feeds the audit record. */
export interface TargetResult {
  data: Record<string, unknown>;
  upstreamStatus?: number;
}
