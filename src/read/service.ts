import type { ReadTarget } from '../core/contract.ts';
import type { TargetDeps, TargetHandler } from './definition.ts';
import { buildEnvelope, type ReadEnvelope } from './envelope.ts';
import { type ReadError, readError, type ToolErrorObject, toReadError } from './errors.ts';
import { resolveReadInput } from './input/index.ts';
import type { CallContext, ResolvedRead } from './types.ts';
import { asReadError } from './upstream/failure.ts';

/** What the adapters need for audit and metrics, success or not. Never holds a password. */
export interface ReadFacts {
  target?: string;
  uri?: string;
  workbookPath?: string;
  upstreamStatus?: number;
  mode?: 'target' | 'uri';
}

export type ReadOutcome =
  | { ok: true; envelope: ReadEnvelope; facts: ReadFacts }
  | { ok: false; error: ToolErrorObject; facts: ReadFacts; cause?: unknown };

export interface ReadService {
  /** `dagu_read` with the raw tool arguments exactly as the caller sent them. */
  read(rawArguments: unknown, call: CallContext): Promise<ReadOutcome>;
  /** An MCP `resources/read` of a `dagu://` URI: the same read in URI mode. */
  readUri(uri: string, call: CallContext): Promise<ReadOutcome>;
}

/** Targets served without Dagu. */
const WITHOUT_DAGU: ReadonlySet<ReadTarget> = new Set(['references', 'reference', 'workbook']);

/** Collections have no singular URI to name in an error raised in target mode. */
const COLLECTION_TARGETS: ReadonlySet<ReadTarget> = new Set(['references', 'dags', 'runs', 'wiki']);

function errorUri(request: ResolvedRead, rawArguments: unknown): string | undefined {
  if (request.mode === 'uri') {
    const supplied = (rawArguments as { uri?: unknown }).uri;
    return typeof supplied === 'string' ? supplied.trim() : request.uri;
  }
  return COLLECTION_TARGETS.has(request.target) ? undefined : request.uri;
}

/** Keeps the original cause reachable for the application log (never sent to the caller). */
function causeOf(error: ReadError): { cause?: unknown } {
  return error.code === 'internal_error' && error.cause !== undefined ? { cause: error.cause } : {};
}

export function createReadService(
  deps: TargetDeps,
  handlers: Readonly<Partial<Record<ReadTarget, TargetHandler>>>,
): ReadService {
  async function read(rawArguments: unknown, call: CallContext): Promise<ReadOutcome> {
    const facts: ReadFacts = {};
    let request: ResolvedRead | undefined;
    try {
      const resolved: ResolvedRead = resolveReadInput(rawArguments);
      request = resolved;
      facts.target = resolved.target;
      facts.mode = resolved.mode;
      if (resolved.uri !== undefined) facts.uri = resolved.uri;
      if (resolved.target === 'workbook') facts.workbookPath = resolved.fields.path;
      const handler = handlers[resolved.target];
      if (handler === undefined) {
        throw readError.unavailable(`The ${resolved.target} target is not served by this gateway.`);
      }
      // With DAGU_API_BASE=auto the REST dialect is found on first use; handlers may consult it first.
      const finding = WITHOUT_DAGU.has(resolved.target) ? undefined : deps.dagu.ready(call.signal);
      if (finding !== undefined) await finding;
      const result = await handler(resolved, deps, call);
      if (result.upstreamStatus !== undefined) facts.upstreamStatus = result.upstreamStatus;
      return { ok: true, envelope: buildEnvelope(resolved, result.data), facts };
    } catch (caught) {
      // Input errors carry what the input layer found; after resolution the contract's `uri` rule is
      // applied here, whatever a target handler put in its error.
      const error =
        request === undefined
          ? toReadError(asReadError(caught))
          : toReadError(asReadError(caught), { target: request.target }).withUri(
              errorUri(request, rawArguments),
            );
      if (error.upstreamStatus !== undefined) facts.upstreamStatus = error.upstreamStatus;
      if (facts.target === undefined && error.target !== undefined) facts.target = error.target;
      return { ok: false, error: error.toObject(), facts, ...causeOf(error) };
    }
  }

  /**
   * A resources/read names its URI directly: an empty one is a malformed URI (`invalid_resource_uri`
   * on `uri`), not a tool call that chose no addressing mode. No `uri` is echoed: none was given.
   */
  async function readUri(uri: string, call: CallContext): Promise<ReadOutcome> {
    if (typeof uri !== 'string' || uri.trim() === '') {
      const error = readError.invalidUri('The uri must not be empty; give a dagu:// resource URI.', {
        field: 'uri',
      });
      return { ok: false, error: error.toObject(), facts: {} };
    }
    return read({ uri }, call);
  }

  return { read, readUri };
}
