import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  RESOURCE_DESCRIPTIONS,
  RESOURCE_TEMPLATES,
  sampleUri,
  templateOf,
  templatesOf,
} from '../../../src/mcp/resources.ts';
import { parseResourceUri, QUERY_TABLE, URI_SHAPES } from '../../../src/read/input/index.ts';
import { readableShapes } from '../../../src/read/input/uri.ts';
import { TARGET_DEFINITIONS } from '../../../src/read/targets/index.ts';

const variablesOf = (template: string) =>
  [...template.matchAll(/\{[+?]?([^}]+)\}/g)]
    .flatMap((match) => match[1]!.split(','))
    .map((name) => name.replace(/\*$/, ''));

describe('resource templates, derived from the target definitions and URI shapes', () => {
  test('every advertised template names a shape its target claims, with exactly its slots and query', () => {
    assert.ok(RESOURCE_TEMPLATES.length > 0);
    for (const { uriTemplate, name } of RESOURCE_TEMPLATES) {
      const parsed = parseResourceUri(
        sampleUri(uriTemplate, (variable) => (variable === 'topic' ? 'read-tool' : 'x')),
      );
      const { shape, target } = parsed;
      assert.equal(shape.link.name, name);
      const claimed = (TARGET_DEFINITIONS[target].uri?.shapes ?? []).map((candidate) => candidate.id);
      assert.ok(
        claimed.includes(shape.id),
        `${uriTemplate} is read by ${target}, which does not claim ${shape.id}`,
      );
      const slots = shape.parts.flatMap((part) =>
        typeof part === 'string' ? [] : [part.label ?? part.slot],
      );
      const params = shape.query === undefined ? [] : Object.keys(QUERY_TABLE[shape.query].params);
      assert.deepEqual(variablesOf(uriTemplate), [...slots, ...params], uriTemplate);
    }
  });

  test('every shape with a value or a query is advertised; the others are fixed resources', () => {
    const advertised = new Set(RESOURCE_TEMPLATES.map((template) => template.uriTemplate));
    for (const shape of URI_SHAPES) {
      const template = templateOf(shape);
      if (template === undefined) assert.deepEqual(shape.parts, [], `${shape.id} has values but no template`);
      else assert.ok(advertised.has(template), `${shape.id}: ${template} is not advertised`);
    }
  });

  test("a shape's template follows its parts and its target's query with no other edit", () => {
    const shape = URI_SHAPES.find((candidate) => candidate.id === 'run_logs')!;
    assert.equal(templateOf(shape), 'dagu://runs/{name}/{dagRunId}/logs{?tail}');
    assert.equal(
      templateOf({ ...shape, parts: [...shape.parts, { slot: 'stepName' }] }),
      'dagu://runs/{name}/{dagRunId}/logs/{stepName}{?tail}',
    );
    const { query: _query, ...withoutQuery } = shape;
    assert.equal(templateOf(withoutQuery), 'dagu://runs/{name}/{dagRunId}/logs');
    assert.equal(templateOf({ ...withoutQuery, parts: ['logs'] }), undefined);
  });

  test('removing a shape from its definition removes its template and its reading, with no other edit', () => {
    const withoutSubRun = {
      ...TARGET_DEFINITIONS,
      run: {
        ...TARGET_DEFINITIONS.run,
        uri: { shapes: TARGET_DEFINITIONS.run.uri!.shapes.filter((shape) => shape.id !== 'sub_run') },
      },
    };
    const shapes = readableShapes(withoutSubRun);
    assert.deepEqual(
      URI_SHAPES.map((shape) => shape.id).filter((id) => !shapes.some((shape) => shape.id === id)),
      ['sub_run'],
    );
    const before = templatesOf(URI_SHAPES).map((template) => template.uriTemplate);
    const after = templatesOf(shapes).map((template) => template.uriTemplate);
    assert.deepEqual(
      before.filter((template) => !after.includes(template)),
      ['dagu://runs/{name}/{dagRunId}/sub/{subRunId}'],
    );
    assert.equal(after.length, before.length - 1);
  });

  test('a shape claimed by two definitions is refused at start-up', () => {
    const twice = {
      ...TARGET_DEFINITIONS,
      runs: { ...TARGET_DEFINITIONS.runs, uri: { shapes: [...TARGET_DEFINITIONS.run.uri!.shapes] } },
    };
    assert.throws(() => readableShapes(twice), /claimed by two targets/);
  });

  test('the descriptions name exactly the templated shapes: none missing, none left over', () => {
    const templated = URI_SHAPES.filter((shape) => templateOf(shape) !== undefined).map((shape) => shape.id);
    assert.deepEqual(Object.keys(RESOURCE_DESCRIPTIONS).sort(), [...templated].sort());
    const { run_logs: _dropped, ...missingOne } = RESOURCE_DESCRIPTIONS;
    assert.throws(() => templatesOf(URI_SHAPES, missingOne), /run_logs has a template but no description/);
  });
});
