import {
  type CallToolResult,
  fromJsonSchema,
  type jsonSchemaValidator,
  type McpServer,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import type { ToolTextMode } from '../config.ts';
import { type ReadEnvelope, successText } from '../read/envelope.ts';
import { READ_INPUT_SCHEMA } from '../read/input/schema.ts';
import type { ReadOutcome, ReadService } from '../read/service.ts';
import { resourceLinkFor } from './links.ts';
import { observedRead } from './observed-read.ts';
import type { OperationObserver } from './operations.ts';
import { factsOf, type McpRequestFacts } from './request-side-channel.ts';
import { READ_OUTPUT_SCHEMA } from './schemas.ts';

export const READ_TOOL_NAME = 'dagu_read';

const READ_TOOL_DESCRIPTION = [
  'Read Dagu state without changing it: DAGs, DAG specs, runs, run and step logs, foreach items,',
  'wiki pages, searches, workbooks, and the built-in reference topics.',
  'Use either `target` (with its fields) or a `uri` (dagu://...), never both.',
  'Start with {"target":"reference","name":"read-tool"} for the full field and query reference.',
].join(' ');

/**
 * The SDK must not validate arguments itself: the contract wants its own error object for every bad
 * input, so the advertised schema goes with a validator that accepts anything.
 */
const passThroughValidator: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

// Built once: fromJsonSchema compiles the output schema with the SDK's ajv.
const INPUT = fromJsonSchema(READ_INPUT_SCHEMA, passThroughValidator) as StandardSchemaWithJSON;
export const READ_TOOL_OUTPUT = fromJsonSchema(READ_OUTPUT_SCHEMA) as StandardSchemaWithJSON;

/**
 * `json` (TOOL_TEXT) adds the JSON of `data` after the success text, as the contract already does for
 * `dags`: hosts that show only `content` then show the agent the result. The MCP specification asks
 * servers returning structured content to also return it in a text item; `contract` keeps the
 * contract's exact text.
 */
function resultText(envelope: ReadEnvelope, mode: ToolTextMode): string {
  const text = successText(envelope);
  if (mode === 'contract' || envelope.target === 'dags') return text;
  return `${text}\n\n${JSON.stringify(envelope.data, null, 2)}`;
}

export function toToolResult(outcome: ReadOutcome, mode: ToolTextMode = 'contract'): CallToolResult {
  if (!outcome.ok) {
    return {
      isError: true,
      content: [{ type: 'text', text: `${outcome.error.code}: ${outcome.error.message}` }],
      structuredContent: { ...outcome.error },
    };
  }
  const { envelope } = outcome;
  const content: CallToolResult['content'] = [{ type: 'text', text: resultText(envelope, mode) }];
  if (envelope.uri !== undefined) content.push(resourceLinkFor(envelope.uri));
  return { content, structuredContent: envelope };
}

/**
 * One `dagu_read` call: validate and read, report it to the observer, shape the tool result. Shared by
 * the SDK's tool handler and the lean path, so both answer every input the same way.
 */
export async function callReadTool(
  reads: ReadService,
  observe: OperationObserver,
  rawArguments: unknown,
  facts: McpRequestFacts | undefined,
  toolText: ToolTextMode = 'contract',
): Promise<CallToolResult> {
  const outcome = await observedRead('tools/call', READ_TOOL_NAME, observe, facts, (call) =>
    reads.read(rawArguments, call),
  );
  return toToolResult(outcome, toolText);
}

export function registerReadTool(
  server: McpServer,
  reads: ReadService,
  observe: OperationObserver,
  toolText: ToolTextMode = 'contract',
): void {
  server.registerTool(
    READ_TOOL_NAME,
    {
      title: 'Read Dagu',
      description: READ_TOOL_DESCRIPTION,
      inputSchema: INPUT,
      outputSchema: READ_TOOL_OUTPUT,
      annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    },
    async (sdkArguments: unknown, ctx) => {
      const facts = factsOf(ctx);
      // Validate what the caller sent, not what the SDK parsed (it drops `__proto__` keys).
      const raw = facts?.rawArguments ? facts.rawArguments.value : sdkArguments;
      return callReadTool(reads, observe, raw, facts, toolText);
    },
  );
}
