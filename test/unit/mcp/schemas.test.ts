// The dagu_read tool as clients receive it from tools/list, checked against the tool-schema dialects of
// the major model providers, which MCP hosts convert tool schemas into:
//
// - OpenAI function calling with `strict: true` (Structured Outputs' supported subset): the root is an
//   object, not a union; every object is closed and lists every property in `required`; only the
//   supported keywords. A strict client makes optional fields required and nullable itself (what the
//   OpenAI Agents SDK's strict conversion does), so the test applies that conversion and checks that
//   the calls a model then makes (nulls for the fields it leaves out) read exactly what the call
//   without them reads: the contract treats null as absent.
// - Gemini function declarations (`parameters`, and `response` for the output: the OpenAPI 3.0 Schema
//   subset): one `type` per schema and never "null", string enums, only the Schema object's fields.
// - Anthropic tool definitions: a tool name of [a-zA-Z0-9_-]{1,64}, an `input_schema` whose root is
//   `type: "object"` with no oneOf/anyOf/allOf at the top, valid JSON Schema 2020-12.
//
// MCP Inspector's portability lint (its `type-union` rule) is the Gemini single-type rule; the
// Inspector itself runs against the gateway in test/integration/mcp/real-clients.e2e.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { READ_INPUT_FIELDS } from '../../../src/core/contract.ts';
import { resolveReadInput } from '../../../src/read/input/index.ts';
import { connectModern, type RunningGateway, startGateway } from '../../support/gateway.ts';

type Schema = Record<string, unknown>;
interface AdvertisedTool {
  name: string;
  description?: string;
  inputSchema: Schema;
  outputSchema?: Schema;
}

const isRecord = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every schema node with its path (properties, items, anyOf/oneOf/allOf, additionalProperties, …). */
function nodes(schema: Schema, path = '#'): Array<{ path: string; node: Schema }> {
  const found = [{ path, node: schema }];
  for (const key of ['properties', '$defs', 'definitions', 'patternProperties']) {
    const map = schema[key];
    if (isRecord(map))
      for (const [name, child] of Object.entries(map))
        if (isRecord(child)) found.push(...nodes(child, `${path}/${key}/${name}`));
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const list = schema[key];
    if (Array.isArray(list))
      list.forEach((child, index) => {
        if (isRecord(child)) found.push(...nodes(child, `${path}/${key}/${index}`));
      });
  }
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains']) {
    const child = schema[key];
    if (isRecord(child)) found.push(...nodes(child, `${path}/${key}`));
  }
  return found;
}

function depth(path: string): number {
  return path.split('/').filter((part) => part === 'properties' || part === 'items').length;
}

// ---- OpenAI strict mode -----------------------------------------------------------------------

/** Structured Outputs' supported keywords (strings: pattern, format; numbers; arrays; composition). */
const OPENAI_STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'title',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  '$ref',
  '$defs',
  'pattern',
  'format',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'minItems',
  'maxItems',
]);

function openAiStrictProblems(schema: Schema): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push('#: the root must be type "object"');
  if ('anyOf' in schema) problems.push('#: the root must not be anyOf');
  let properties = 0;
  for (const { path, node } of nodes(schema)) {
    for (const key of Object.keys(node))
      if (!OPENAI_STRICT_KEYWORDS.has(key)) problems.push(`${path}: ${key} is not supported`);
    if (node.type === 'object' || isRecord(node.properties)) {
      if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`);
      const names = Object.keys(isRecord(node.properties) ? node.properties : {});
      properties += names.length;
      const required = new Set(Array.isArray(node.required) ? node.required : []);
      for (const name of names) if (!required.has(name)) problems.push(`${path}: ${name} is not required`);
    }
    if (Array.isArray(node.enum) && node.enum.length > 1000) problems.push(`${path}: over 1000 enum values`);
    if (depth(path) > 10) problems.push(`${path}: nested more than 10 levels`);
  }
  if (properties > 5000) problems.push(`#: ${properties} properties (at most 5000)`);
  return problems;
}

/**
 * What a strict client does to a tool schema with optional fields: every property required, and an
 * optional one nullable (anyOf with {"type":"null"}: the branch form, which also keeps the enum).
 */
function toOpenAiStrict(schema: Schema): Schema {
  if (!isRecord(schema.properties)) return schema;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => {
      const strict = toOpenAiStrict(property as Schema);
      if (required.has(name)) return [name, strict];
      const { description, ...rest } = strict;
      return [
        name,
        { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] },
      ];
    }),
  );
  return { ...schema, properties, required: Object.keys(properties), additionalProperties: false };
}

// ---- Gemini function declarations -------------------------------------------------------------

/** The fields of Gemini's Schema object (an OpenAPI 3.0 subset). */
const GEMINI_KEYWORDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
/**
 * Not in Gemini's Schema object; MCP hosts that target Gemini (gemini-cli, google-genai's MCP support)
 * drop them. Nothing a model needs is lost: the gateway's own validation refuses unknown fields.
 */
const GEMINI_DROPPED = new Set(['additionalProperties', '$schema']);
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

function geminiProblems(schema: Schema): string[] {
  const problems: string[] = [];
  for (const { path, node } of nodes(schema)) {
    for (const key of Object.keys(node))
      if (!GEMINI_KEYWORDS.has(key) && !GEMINI_DROPPED.has(key))
        problems.push(`${path}: ${key} is not a Gemini Schema field`);
    if ('type' in node && (typeof node.type !== 'string' || !GEMINI_TYPES.has(node.type)))
      problems.push(`${path}: type ${JSON.stringify(node.type)} is not one Gemini type`);
    if (!('type' in node) && !('anyOf' in node)) problems.push(`${path}: no type`);
    if (Array.isArray(node.enum)) {
      if (node.type !== 'string') problems.push(`${path}: an enum must be of type string`);
      for (const value of node.enum)
        if (typeof value !== 'string') problems.push(`${path}: enum value ${JSON.stringify(value)}`);
    }
  }
  return problems;
}

// ---- Anthropic tool definitions ---------------------------------------------------------------

function anthropicProblems(tool: AdvertisedTool): string[] {
  const problems: string[] = [];
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) problems.push(`name ${tool.name}`);
  if (!tool.description) problems.push('no description');
  const schema = tool.inputSchema;
  if (schema.type !== 'object') problems.push('input_schema: the root must be type "object"');
  for (const key of ['oneOf', 'anyOf', 'allOf'])
    if (key in schema) problems.push(`input_schema: ${key} at the top level is not supported`);
  return problems;
}

function jsonSchemaProblems(schema: Schema): string[] {
  const ajv = new Ajv2020({ strict: true, strictTypes: true, allErrors: true });
  try {
    ajv.compile(schema);
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

// ---- the tool as advertised -------------------------------------------------------------------

let gateway: RunningGateway;
let tool: AdvertisedTool;
before(async () => {
  // tools/list never reaches Dagu: an unroutable upstream proves it.
  gateway = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', DAGU_TIMEOUT_MS: '200' });
  const client = await connectModern(gateway.mcpUrl);
  try {
    const { tools } = await client.listTools();
    const found = tools.find((candidate) => candidate.name === 'dagu_read');
    assert.ok(found, 'dagu_read is listed');
    tool = found as unknown as AdvertisedTool;
  } finally {
    await client.close();
  }
});
after(async () => {
  await gateway?.close();
});

describe('OpenAI strict function calling', () => {
  test('the input schema converts to strict mode without a problem, every keyword kept', () => {
    const strict = toOpenAiStrict(tool.inputSchema);
    assert.deepEqual(openAiStrictProblems(strict), []);
    assert.deepEqual(Object.keys(strict.properties as Schema), [...READ_INPUT_FIELDS]);
  });

  test('a refusal names what strict mode cannot take (the checker is not vacuous)', () => {
    const problems = openAiStrictProblems(
      toOpenAiStrict({ type: 'object', properties: { name: { type: 'string', minLength: 1 } } }),
    );
    assert.deepEqual(problems, ['#/properties/name/anyOf/0: minLength is not supported']);
    assert.deepEqual(openAiStrictProblems({ type: 'object', properties: { name: { type: 'string' } } }), [
      '#: additionalProperties must be false',
      '#: name is not required',
    ]);
    assert.ok(openAiStrictProblems({ anyOf: [{ type: 'object' }] }).length > 0);
  });

  test('a strict model sends every field, null for the ones it leaves out: the read is the same', () => {
    const calls: Array<Record<string, unknown>> = [
      { target: 'dags' },
      { target: 'run', name: 'nightly', dagRunId: 'latest' },
      { target: 'step_log', name: 'nightly', dagRunId: 'latest', stepName: 'extract', query: 'tail=10' },
      { target: 'dag_search', search: 'etl', limit: 5 },
      { target: 'wiki_page', workspace: 'ops', path: 'runbooks/deploy' },
      { uri: 'dagu://runs/nightly/latest/logs?tail=100' },
    ];
    for (const call of calls) {
      const strictCall = Object.fromEntries(READ_INPUT_FIELDS.map((field) => [field, call[field] ?? null]));
      const { supplied: _a, ...alone } = resolveReadInput(call) as unknown as Schema;
      const { supplied: _b, ...withNulls } = resolveReadInput(strictCall) as unknown as Schema;
      assert.deepEqual(withNulls, alone, JSON.stringify(call));
    }
  });
});

describe('Gemini function declarations', () => {
  test('parameters: one type per schema, never null, string enums, only Schema fields', () => {
    assert.deepEqual(geminiProblems(tool.inputSchema), []);
  });

  test('response (the output schema): the same rules', () => {
    assert.ok(tool.outputSchema);
    assert.deepEqual(geminiProblems(tool.outputSchema), []);
  });

  test('a type union is refused (the checker is not vacuous)', () => {
    const problems = geminiProblems({ type: 'object', properties: { name: { type: ['string', 'null'] } } });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /not one Gemini type/);
  });
});

describe('Anthropic tool definitions', () => {
  test('name, description and an object input_schema with no top-level union', () => {
    assert.deepEqual(anthropicProblems(tool), []);
  });

  test('input and output schemas are valid JSON Schema 2020-12 (ajv strict)', () => {
    assert.deepEqual(jsonSchemaProblems(tool.inputSchema), []);
    assert.ok(tool.outputSchema);
    assert.deepEqual(jsonSchemaProblems(tool.outputSchema), []);
  });
});

test('no schema node anywhere has a type array (MCP Inspector\'s "type-union" portability warning)', () => {
  for (const schema of [tool.inputSchema, tool.outputSchema ?? {}])
    for (const { path, node } of nodes(schema))
      assert.ok(!Array.isArray(node.type), `${path}: type ${JSON.stringify(node.type)}`);
});
