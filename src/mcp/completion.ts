import type { CompleteRequestParams, CompleteResult, McpServer } from '@modelcontextprotocol/server';
import { ProtocolError } from '@modelcontextprotocol/server';
import type { ReadTarget } from '../core/contract.ts';
import type {
  CompletionField,
  CompletionOutcome,
  CompletionRequest,
  CompletionService,
} from '../read/completion.ts';
import { resolveReadInput } from '../read/input/index.ts';
import { observedRead } from './observed-read.ts';
import type { OperationObserver } from './operations.ts';
import { paramsSchema } from './params.ts';
import { promptArgumentCompletion } from './prompts.ts';
import { factsOf } from './request-side-channel.ts';
import { JSON_RPC_CODE, RESOURCE_TEMPLATES, sampleUri } from './resources.ts';

/** The protocol's cap on values in one completion result. */
export const MAX_COMPLETION_VALUES = 100;

/** URI variables that name a tool field with values in Dagu or the reference. */
const COMPLETABLE_FIELDS: ReadonlySet<string> = new Set<CompletionField>([
  'name',
  'dagRunId',
  'subRunId',
  'stepName',
  'workspace',
  'path',
  'topic',
]);

interface TemplateShape {
  /** Path variables (`{name}`, `{+path}`), in order. */
  pathVariables: ReadonlySet<string>;
  /** Query variables (`{?tail,stream}`). */
  queryVariables: ReadonlySet<string>;
  /** The read target the template's URIs resolve to. */
  target: ReadTarget | undefined;
}

/** The target a template resolves to, from a sample URI with every variable filled (a topic that exists). */
function targetOf(uriTemplate: string): ReadTarget | undefined {
  const sample = sampleUri(uriTemplate, (variable) => (variable === 'topic' ? 'read-tool' : 'x'));
  try {
    return resolveReadInput({ uri: sample }).target;
  } catch {
    return undefined;
  }
}

/** Every advertised template by its exact `uriTemplate` string, parsed once at start-up. */
const TEMPLATE_SHAPES: ReadonlyMap<string, TemplateShape> = new Map(
  RESOURCE_TEMPLATES.map(({ uriTemplate }) => {
    const pathVariables = new Set([...uriTemplate.matchAll(/\{\+?(\w+)\}/g)].map((match) => match[1]!));
    const query = /\{\?([^}]*)\}$/.exec(uriTemplate)?.[1] ?? '';
    const queryVariables = new Set(
      query
        .split(',')
        .filter((name) => name !== '')
        .map((name) => name.replace(/\*$/, '')),
    );
    return [uriTemplate, { pathVariables, queryVariables, target: targetOf(uriTemplate) }];
  }),
);

/** Context values the client already chose, trimmed; blank ones count as not chosen. */
function chosen(params: CompleteRequestParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params.context?.arguments ?? {})) {
    if (typeof value === 'string' && value.trim() !== '') out[key] = value.trim();
  }
  return out;
}

/**
 * What to ask the completion service for, or a fixed list, or nothing. A prompt, template or argument
 * the gateway does not know completes to nothing (there is nothing to suggest), not to an error.
 */
function plan(params: CompleteRequestParams): CompletionRequest | { values: readonly string[] } | undefined {
  const { ref, argument } = params;
  const context = chosen(params);
  if (ref.type === 'ref/prompt') {
    const source = promptArgumentCompletion(ref.name, argument.name);
    if (source === undefined) return undefined;
    if ('values' in source) return source;
    return { kind: 'field', field: source.field, value: argument.value, context };
  }
  const shape = TEMPLATE_SHAPES.get(ref.uri);
  if (shape === undefined) return undefined;
  if (shape.pathVariables.has(argument.name)) {
    if (!COMPLETABLE_FIELDS.has(argument.name)) return undefined;
    return { kind: 'field', field: argument.name as CompletionField, value: argument.value, context };
  }
  if (shape.target === undefined) return undefined;
  if (shape.queryVariables.has(argument.name)) {
    return { kind: 'queryValue', target: shape.target, param: argument.name, value: argument.value };
  }
  // The tool's `query` field: the parameter names the template's target accepts.
  if (argument.name === 'query') return { kind: 'queryName', target: shape.target, value: argument.value };
  return undefined;
}

const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } } as const;

const COMPLETE = paramsSchema<CompleteRequestParams>({
  type: 'object',
  required: ['ref', 'argument'],
  properties: {
    ref: {
      oneOf: [
        {
          type: 'object',
          required: ['type', 'name'],
          properties: { type: { const: 'ref/prompt' }, name: { type: 'string' } },
        },
        {
          type: 'object',
          required: ['type', 'uri'],
          properties: { type: { const: 'ref/resource' }, uri: { type: 'string' } },
        },
      ],
    },
    argument: {
      type: 'object',
      required: ['name', 'value'],
      properties: { name: { type: 'string' }, value: { type: 'string' } },
    },
    context: { type: 'object', properties: { arguments: STRING_MAP } },
    _meta: { type: 'object' },
  },
});

const startsWith = (value: string, prefix: string) => value.toLowerCase().startsWith(prefix.toLowerCase());

export function registerCompletions(
  server: McpServer,
  completions: CompletionService,
  observe: OperationObserver,
): void {
  server.server.registerCapabilities({ completions: {} });
  server.server.setRequestHandler(
    'completion/complete',
    COMPLETE,
    async (params, ctx): Promise<CompleteResult> => {
      const wanted = plan(params);
      const outcome = await observedRead(
        'completion/complete',
        undefined,
        observe,
        factsOf(ctx),
        async (call): Promise<CompletionOutcome> => {
          if (wanted !== undefined && !('values' in wanted)) {
            return completions.complete(wanted, call, MAX_COMPLETION_VALUES);
          }
          const values = (wanted?.values ?? []).filter((value) => startsWith(value, params.argument.value));
          return { ok: true, completion: { values, total: values.length, hasMore: false }, facts: {} };
        },
      );
      if (!outcome.ok) {
        // Dagu unreachable or an unexpected failure: say so rather than suggest nothing.
        throw new ProtocolError(JSON_RPC_CODE[outcome.error.code], outcome.error.message, {
          ...outcome.error,
        });
      }
      return { completion: { ...outcome.completion } };
    },
  );
}
