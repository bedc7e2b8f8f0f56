import type { ToolErrorObject } from '../read/errors.ts';
import type { ReadFacts } from '../read/service.ts';
import type { CallContext } from '../read/types.ts';
import type { OperationObserver, OperationRecord, OperationTrace } from './operations.ts';
import type { McpRequestFacts } from './request-side-channel.ts';

/** A refused operation: the failure shape every operation outcome shares. */
export interface RefusedOutcome {
  ok: false;
  error: ToolErrorObject;
  facts: ReadFacts;
}

/**
 * The outcome of a call that arrived without its per-call context (who calls, what they may read):
 * refused, never served with some default access. The observer sees `request: undefined` and logs it
 * at error level, since only a wiring bug gets here.
 */
export function refusedWithoutContext(): RefusedOutcome {
  return {
    ok: false,
    error: { code: 'unauthorized', message: 'The call carries no caller context; the read is refused.' },
    facts: {},
  };
}

/**
 * A read as an MCP operation: the per-call facts become the read's call context, and the finished read
 * is handed to the observer (audit and metrics) with its duration. No facts means no access (fail
 * closed): the read is refused as `unauthorized`, never served with a default.
 */
/** The read as the caller the facts name; without facts, refused (fail closed). */
function readAs<Outcome>(
  facts: McpRequestFacts | undefined,
  read: (call: CallContext) => Promise<Outcome>,
): Promise<Outcome | RefusedOutcome> | RefusedOutcome {
  if (facts === undefined) return refusedWithoutContext();
  return read({
    access: facts.access,
    signal: facts.signal,
    caller: `${facts.identityKind}:${facts.identity}`,
  });
}

export async function observedRead<Outcome extends OperationRecord['outcome']>(
  method: OperationRecord['method'],
  tool: string | undefined,
  observe: OperationObserver,
  facts: McpRequestFacts | undefined,
  read: (call: CallContext) => Promise<Outcome>,
): Promise<Outcome | RefusedOutcome> {
  const tracer = observe.tracer;
  if (tracer !== undefined)
    return tracedRead(tracer.start(method, tool, facts), method, tool, observe, facts, read);
  const started = performance.now();
  const outcome = await readAs(facts, read);
  observe({ method, tool, outcome, durationSeconds: (performance.now() - started) / 1000, request: facts });
  return outcome;
}

/** The same read inside its operation's span (tracing on): the record carries the trace id. */
function tracedRead<Outcome extends OperationRecord['outcome']>(
  trace: OperationTrace,
  method: OperationRecord['method'],
  tool: string | undefined,
  observe: OperationObserver,
  facts: McpRequestFacts | undefined,
  read: (call: CallContext) => Promise<Outcome>,
): Promise<Outcome | RefusedOutcome> {
  return trace.run(async () => {
    const started = performance.now();
    let record: OperationRecord | undefined;
    try {
      const outcome = await readAs(facts, read);
      record = {
        method,
        tool,
        outcome,
        durationSeconds: (performance.now() - started) / 1000,
        request: facts,
      };
      if (trace.traceId !== undefined) record.traceId = trace.traceId;
      observe(record);
      return outcome;
    } finally {
      if (record === undefined) {
        // A throw out of the read (the read service answers its failures as outcomes; this is a bug).
        const outcome: RefusedOutcome = {
          ok: false,
          error: { code: 'internal_error', message: 'The read failed unexpectedly.' },
          facts: {},
        };
        trace.end({
          method,
          tool,
          outcome,
          durationSeconds: (performance.now() - started) / 1000,
          request: facts,
        });
      } else {
        trace.end(record);
      }
    }
  });
}
