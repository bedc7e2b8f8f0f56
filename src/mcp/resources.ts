import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
} from '@modelcontextprotocol/server';
import type { ErrorCode } from '../core/contract.ts';
import { QUERY_TABLE, type ReadableShape, URI_SHAPES } from '../read/input/index.ts';
import type { ReadService } from '../read/service.ts';
import { REFERENCE_TOPICS } from '../reference/topics.ts';
import { resourceLinkFor } from './links.ts';
import { observedRead } from './observed-read.ts';
import type { OperationObserver } from './operations.ts';
import { factsOf, type McpRequestFacts } from './request-side-channel.ts';

/** What each templated shape reads, for the model (the templates themselves come from the shapes). */
export const RESOURCE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  reference: 'A reference topic (Markdown).',
  dags: 'DAG list.',
  dag_spec: 'A DAG definition (YAML).',
  runs: 'DAG-run list, newest first.',
  run: 'A DAG run with its steps.',
  run_logs: 'Scheduler log and per-step log flags of a run.',
  step_log: 'stdout/stderr of one step.',
  foreach_items: 'Items of a foreach step.',
  foreach_item: 'One foreach item with its body steps.',
  foreach_step_log: 'Log of a foreach body step.',
  sub_run: 'A child DAG run under its root run.',
  sub_step_log: 'stdout/stderr of a child-run step.',
  sub_foreach_items: 'Items of a child-run foreach step.',
  sub_foreach_item: 'One foreach item of a child run.',
  sub_foreach_step_log: 'Log of a foreach body step of a child run.',
  wiki: 'Wiki pages of every workspace.',
  wiki_workspace: 'Wiki pages.',
  wiki_page: 'A wiki page (Markdown).',
};

/**
 * The RFC 6570 template of a shape: its path with a `{+…}` for a value spanning segments, and the
 * query parameters of its target (`*` for a repeatable one). Undefined for a shape with neither: a
 * fixed resource.
 */
export function templateOf(shape: ReadableShape): string | undefined {
  const path = shape.parts.map((part) =>
    typeof part === 'string' ? part : `{${part.rest ? '+' : ''}${part.label ?? part.slot}}`,
  );
  const params = shape.query === undefined ? [] : Object.entries(QUERY_TABLE[shape.query].params);
  if (params.length === 0 && path.every((part) => !part.startsWith('{'))) return undefined;
  const query = params.map(([name, spec]) => `${name}${spec.repeatable ? '*' : ''}`).join(',');
  return [`dagu://${shape.family}`, ...path].join('/') + (query === '' ? '' : `{?${query}}`);
}

/** URI templates of the given shapes, in their order (the contract's, "Addressing modes"). */
export function templatesOf(
  shapes: readonly ReadableShape[],
  descriptions: Readonly<Record<string, string>> = RESOURCE_DESCRIPTIONS,
): ReadonlyArray<{ uriTemplate: string; description: string }> {
  return shapes.flatMap((shape) => {
    const uriTemplate = templateOf(shape);
    if (uriTemplate === undefined) return [];
    const description = descriptions[shape.id];
    if (description === undefined) throw new Error(`URI shape ${shape.id} has a template but no description`);
    return [{ uriTemplate, description }];
  });
}

const TEMPLATES = templatesOf(URI_SHAPES);

/**
 * A concrete URI for a template: its query dropped, each variable filled by `valueFor` (default `x`).
 * The link table gives it its contract name and MIME type; completion resolves it to a target.
 */
export const sampleUri = (template: string, valueFor: (variable: string) => string = () => 'x') =>
  template
    .replace(/\{\?[^}]*\}$/, '')
    .replace(/\{\+?(\w+)\*?\}/g, (_, variable: string) => valueFor(variable));

export const RESOURCE_TEMPLATES = TEMPLATES.map((template) => {
  const { name, mimeType } = resourceLinkFor(sampleUri(template.uriTemplate));
  return { ...template, name, mimeType };
});

/** Fixed resources a client can browse without knowing any name. */
const FIXED_RESOURCES = [
  ...['dagu://reference', 'dagu://dags', 'dagu://runs', 'dagu://wiki'].map((uri) => {
    const { name, mimeType } = resourceLinkFor(uri);
    return { uri, name, mimeType };
  }),
  ...REFERENCE_TOPICS.map((topic) => {
    const uri = `dagu://reference/${topic.name}`;
    const { name, mimeType } = resourceLinkFor(uri);
    return { uri, name, mimeType, title: topic.title, description: topic.description };
  }),
];

/** JSON-RPC codes for failed reads: the caller's fault is Invalid Params (also the spec's "not found"). */
export const JSON_RPC_CODE: Readonly<Record<ErrorCode, number>> = {
  unauthenticated: ProtocolErrorCode.InvalidRequest,
  unauthorized: ProtocolErrorCode.InvalidRequest,
  invalid_tool_input: ProtocolErrorCode.InvalidParams,
  unsupported_read_target: ProtocolErrorCode.InvalidParams,
  invalid_resource_uri: ProtocolErrorCode.InvalidParams,
  unsupported_resource: ProtocolErrorCode.InvalidParams,
  resource_not_found: ProtocolErrorCode.InvalidParams,
  resource_unavailable: ProtocolErrorCode.InternalError,
  internal_error: ProtocolErrorCode.InternalError,
};

/** The body of a resource: Markdown and YAML as themselves, everything else as the JSON of `data`. */
function resourceText(data: Record<string, unknown>, mimeType: string): string {
  if (mimeType === 'text/markdown') return String(data.text ?? data.content ?? '');
  if (mimeType === 'application/yaml') return String(data.spec ?? '');
  return JSON.stringify(data);
}

/** A failed resource read, as the JSON-RPC error it is answered with. */
export interface ResourceReadError {
  code: number;
  message: string;
  data: Record<string, unknown>;
}

export type ResourceReadAnswer =
  | { ok: true; result: ReadResourceResult }
  | { ok: false; error: ResourceReadError };

/**
 * One `resources/read`: the same read as the tool in URI mode, reported to the observer. Shared by the
 * SDK's handler and the lean path.
 */
export async function readResource(
  reads: ReadService,
  observe: OperationObserver,
  uri: string,
  facts: McpRequestFacts | undefined,
): Promise<ResourceReadAnswer> {
  const outcome = await observedRead('resources/read', undefined, observe, facts, (call) =>
    reads.readUri(uri, call),
  );
  if (!outcome.ok) {
    return {
      ok: false,
      error: {
        code: JSON_RPC_CODE[outcome.error.code],
        message: outcome.error.message,
        data: { ...outcome.error, resourceUri: uri },
      },
    };
  }
  const canonical = outcome.envelope.uri ?? uri;
  const { mimeType } = resourceLinkFor(canonical);
  return {
    ok: true,
    result: { contents: [{ uri: canonical, mimeType, text: resourceText(outcome.envelope.data, mimeType) }] },
  };
}

export function registerResources(server: McpServer, reads: ReadService, observe: OperationObserver): void {
  server.server.registerCapabilities({ resources: {} });
  server.server.setRequestHandler('resources/list', () => ({ resources: FIXED_RESOURCES }));
  server.server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.server.setRequestHandler('resources/read', async (request, ctx): Promise<ReadResourceResult> => {
    const answer = await readResource(reads, observe, request.params.uri, factsOf(ctx));
    if (!answer.ok) throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
    return answer.result;
  });
}
