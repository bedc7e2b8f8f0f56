import { UNRESTRICTED_ACCESS } from '../core/access.ts';
import type { CallContext } from '../read/types.ts';
import type { OperationObserver, OperationRecord } from './operations.ts';
import { type McpRequestFacts, requestSideChannel } from './request-side-channel.ts';

/**
 * A read as an MCP operation: the per-call facts from the request's side channel become the read's
 * call context, and the finished read is handed to the observer (audit and metrics) with its duration.
 */
export async function observedRead<Outcome extends OperationRecord['outcome']>(
  method: OperationRecord['method'],
  tool: string | undefined,
  observe: OperationObserver,
  read: (call: CallContext, facts: McpRequestFacts | undefined) => Promise<Outcome>,
): Promise<Outcome> {
  const started = performance.now();
  const facts = requestSideChannel.getStore();
  const call: CallContext = {
    access: facts?.access ?? UNRESTRICTED_ACCESS,
    ...(facts ? { signal: facts.signal } : {}),
  };
  const outcome = await read(call, facts);
  observe({ method, tool, outcome, durationSeconds: (performance.now() - started) / 1000, request: facts });
  return outcome;
}
