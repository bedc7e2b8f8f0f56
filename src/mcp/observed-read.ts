import type { ToolErrorObject } from '../read/errors.ts';
import type { ReadFacts } from '../read/service.ts';
import type { CallContext } from '../read/types.ts';
import type { OperationObserver, OperationRecord } from './operations.ts';
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
export async function observedRead<Outcome extends OperationRecord['outcome']>(
  method: OperationRecord['method'],
  tool: string | undefined,
  observe: OperationObserver,
  facts: McpRequestFacts | undefined,
  read: (call: CallContext) => Promise<Outcome>,
): Promise<Outcome | RefusedOutcome> {
  const started = performance.now();
  const outcome =
    facts === undefined
      ? refusedWithoutContext()
      : await read({
          access: facts.access,
          signal: facts.signal,
          caller: `${facts.identityKind}:${facts.identity}`,
        });
  observe({ method, tool, outcome, durationSeconds: (performance.now() - started) / 1000, request: facts });
  return outcome;
}
