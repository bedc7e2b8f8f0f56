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
}

export type OperationObserver = (record: OperationRecord) => void;
