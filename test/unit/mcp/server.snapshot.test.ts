// Snapshots of what clients see in the capabilities, tools/list, resources/templates/list and
// prompts/list, one file per read target (the input fields it takes with their advertised schema,
// its query variables and its resource templates) and one for the parts every target shares (the
// capabilities, the tool's name, description, envelope and annotations, the order of fields and
// templates, the prompts). A change to the advertised contract must be a deliberate change to the
// snapshots: UPDATE_SNAPSHOTS=1 rewrites them (and removes the file of a target that no longer exists).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import {
  READ_TARGETS,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../../src/core/contract.ts';
import { templateOf } from '../../../src/mcp/resources.ts';
import { QUERY_TABLE, TARGET_SPECS, URI_SHAPES } from '../../../src/read/input/index.ts';
import { isQueryTarget } from '../../../src/read/input/query.ts';
import { fieldUses } from '../../../src/read/input/schema.ts';
import { connectLegacy, connectModern, type RunningGateway, startGateway } from '../../support/gateway.ts';

const DIR = new URL('./__snapshots__/mcp-surface/', import.meta.url);
const TARGETS_DIR = new URL('targets/', DIR);
const update = process.env.UPDATE_SNAPSHOTS === '1';

interface Template {
  uriTemplate: string;
}
interface Tool {
  name: string;
  inputSchema: { properties: Record<string, unknown> };
}
interface Surface {
  capabilities: unknown;
  tools: Tool[];
  resourceTemplates: Template[];
  prompts: unknown[];
}

/** In the shared snapshot, a field some target takes is shown in the targets' files instead. */
const IN_TARGET_FILES = 'see targets/*.json';

const takers = (field: TargetField) => fieldUses(TARGET_SPECS, field).map((use) => use.target);

/** Which target reads each advertised template (every shape belongs to one target definition). */
const TEMPLATE_TARGET = new Map(
  URI_SHAPES.flatMap((shape) => {
    const template = templateOf(shape);
    return template === undefined ? [] : [[template, shape.target] as const];
  }),
);

function sharedPart(surface: Surface) {
  const tools = surface.tools.map((tool) => {
    const properties = Object.fromEntries(
      Object.entries(tool.inputSchema.properties).map(([field, property]) =>
        (TARGET_FIELDS as readonly string[]).includes(field) && takers(field as TargetField).length > 0
          ? [field, IN_TARGET_FILES]
          : [field, property],
      ),
    );
    return { ...tool, inputSchema: { ...tool.inputSchema, properties } };
  });
  return {
    capabilities: surface.capabilities,
    tools,
    resourceTemplates: surface.resourceTemplates.map((template) => template.uriTemplate),
    prompts: surface.prompts,
  };
}

function targetPart(surface: Surface, target: ReadTarget) {
  const spec = TARGET_SPECS[target];
  const tool = surface.tools.find((candidate) => candidate.name === 'dagu_read');
  assert.ok(tool, 'dagu_read is listed');
  const taken = TARGET_FIELDS.filter((field) => takers(field).includes(target));
  return {
    target,
    fields: {
      required: spec.required,
      optional: spec.optional,
      defaults: spec.defaults,
      together: spec.together,
    },
    inputSchema: Object.fromEntries(taken.map((field) => [field, tool.inputSchema.properties[field]])),
    queryVariables: isQueryTarget(target) ? Object.keys(QUERY_TABLE[target].params) : [],
    resourceTemplates: surface.resourceTemplates.filter(
      (template) => TEMPLATE_TARGET.get(template.uriTemplate) === target,
    ),
  };
}

/** Compares (or, in update mode, writes) one snapshot file. A missing file fails: it would pass vacuously. */
function matches(file: URL, value: unknown): void {
  const actual = `${JSON.stringify(value, null, 2)}\n`;
  if (update) writeFileSync(file, actual);
  assert.ok(existsSync(file), `no snapshot ${file.pathname}: run with UPDATE_SNAPSHOTS=1 and review it`);
  assert.equal(actual, readFileSync(file, 'utf8'));
}

let gateway: RunningGateway;
let surface: Surface;
before(async () => {
  // tools/list and template listing never reach Dagu: an unroutable upstream proves it.
  gateway = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', DAGU_TIMEOUT_MS: '200' });
  const surfaces: Surface[] = [];
  for (const connect of [connectModern, connectLegacy]) {
    const client = await connect(gateway.mcpUrl);
    try {
      const { tools } = await client.listTools();
      const { resourceTemplates } = await client.listResourceTemplates();
      const { prompts } = await client.listPrompts();
      // The test client types the listings loosely; these are the SDK's result shapes.
      const listed = { capabilities: client.serverCapabilities(), tools, resourceTemplates, prompts };
      surfaces.push(listed as unknown as Surface);
    } finally {
      await client.close();
    }
  }
  assert.deepEqual(surfaces[0], surfaces[1], 'both eras advertise the same surface');
  surface = surfaces[0]!;
  if (update) {
    rmSync(TARGETS_DIR, { recursive: true, force: true });
    mkdirSync(TARGETS_DIR, { recursive: true });
  }
});
after(async () => {
  await gateway?.close();
});

describe('the advertised MCP surface matches its snapshots, for both client eras', () => {
  test('shared: capabilities, the tool without its per-target fields, template order, prompts', () => {
    matches(new URL('shared.json', DIR), sharedPart(surface));
  });

  for (const target of READ_TARGETS) {
    test(`target ${target}: its fields, their schema, its query variables and templates`, () => {
      matches(new URL(`${target}.json`, TARGETS_DIR), targetPart(surface, target));
    });
  }

  test('the snapshots cover the whole surface, and no snapshot is left of a target that is gone', () => {
    assert.deepEqual(readdirSync(TARGETS_DIR).sort(), READ_TARGETS.map((target) => `${target}.json`).sort());
    const tool = surface.tools.find((candidate) => candidate.name === 'dagu_read')!;
    const shown = new Set<string>();
    for (const target of READ_TARGETS) {
      const part = targetPart(surface, target);
      for (const field of Object.keys(part.inputSchema)) shown.add(field);
      for (const template of part.resourceTemplates) shown.add(template.uriTemplate);
    }
    const shared = sharedPart(surface).tools.find((candidate) => candidate.name === 'dagu_read')!;
    for (const [field, property] of Object.entries(shared.inputSchema.properties)) {
      if (property === IN_TARGET_FILES) assert.ok(shown.has(field), `${field} is in no snapshot`);
    }
    assert.deepEqual(Object.keys(shared.inputSchema.properties), Object.keys(tool.inputSchema.properties));
    for (const { uriTemplate } of surface.resourceTemplates) {
      assert.ok(shown.has(uriTemplate), `${uriTemplate} is read by no target's snapshot`);
    }
  });
});
