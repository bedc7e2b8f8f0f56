import type { CompletionOutcome } from '../read/completion.ts';
import type { ReadOutcome } from '../read/service.ts';
import type { McpRequestFacts } from './request-side-channel.ts';

/** One finished MCP operation that reached the read service; the app feeds it to audit and metrics. */
export interface OperationRecord {
  method: 'tools/call' | 'resources/read' | 'completion/complete';
  tool: string | undefined;
  outcome: ReadOutcome | CompletionOutcome;
  durationSeconds: number;
  request: McpRequestFacts | undefined;
  /** The W3C trace id of the operation's span, when tracing is on (audit lines and exemplars carry it). */
  traceId?: string;
}

/** One traced operation: its span is current while `run` runs; `end` records the outcome and ends it. */
export interface OperationTrace {
  /** The trace id when the span is sampled (recorded), else undefined: nothing would link to it. */
  readonly traceId: string | undefined;
  run<T>(operation: () => Promise<T>): Promise<T>;
  end(record: OperationRecord): void;
}

/** Starts a span per MCP operation (src/trace/); absent when tracing is off. */
export interface OperationTracer {
  start(
    method: OperationRecord['method'],
    tool: string | undefined,
    request: McpRequestFacts | undefined,
  ): OperationTrace;
}

/** What happens after every operation (metrics, audit, log); `tracer`, when set, spans each one. */
export interface OperationObserver {
  (record: OperationRecord): void;
  readonly tracer?: OperationTracer | undefined;
}
