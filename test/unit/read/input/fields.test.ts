import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEPRECATED_TARGET_ALIASES,
  READ_INPUT_FIELDS,
  READ_TARGETS,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../../../src/core/contract.ts';
import {
  FIELD_RULES,
  FIELD_SPECS,
  type FieldRule,
  QUERY_TARGETS,
  READ_INPUT_SCHEMA,
  TARGET_SPECS,
  TARGETS_WITH_TARGET_MODE_URI,
} from '../../../../src/read/input/index.ts';

// The contract's input table, transcribed independently of src: field → required / optional targets.
const CONTRACT: Record<TargetField, { required: ReadTarget[]; optional: ReadTarget[] }> = {
  name: {
    required: ['dag', 'dag_spec', 'run', 'run_logs', 'step_log', 'foreach_items', 'foreach_item'],
    optional: ['reference'],
  },
  dagRunId: { required: ['run', 'run_logs', 'step_log', 'foreach_items', 'foreach_item'], optional: [] },
  subRunId: { required: [], optional: ['run', 'step_log', 'foreach_items', 'foreach_item'] },
  stepName: { required: ['step_log', 'foreach_items', 'foreach_item'], optional: [] },
  item: { required: ['foreach_item'], optional: ['step_log'] },
  bodyStepName: { required: [], optional: ['step_log'] },
  query: { required: [], optional: ['dags', 'wiki', 'runs', 'run_logs', 'step_log', 'foreach_items'] },
  workspace: { required: ['wiki_page'], optional: ['wiki', 'wiki_search', 'dag_search'] },
  path: { required: ['wiki_page', 'workbook'], optional: [] },
  password: { required: [], optional: ['workbook'] },
  search: { required: ['wiki_search', 'dag_search'], optional: [] },
  prefix: { required: [], optional: ['wiki', 'wiki_search'] },
  cursor: { required: [], optional: ['wiki_search', 'dag_search'] },
  limit: { required: [], optional: ['wiki_search', 'dag_search'] },
};

function contractRule(target: ReadTarget, field: TargetField): FieldRule {
  const row = CONTRACT[field];
  if (row.required.includes(target)) return 'required';
  if (row.optional.includes(target)) return 'optional';
  return 'forbidden';
}

describe('field table: every target × every field matches the contract', () => {
  for (const target of READ_TARGETS) {
    for (const field of TARGET_FIELDS) {
      const expected = contractRule(target, field);
      test(`${target} × ${field} is ${expected}`, () => {
        assert.equal(FIELD_RULES[target][field], expected);
      });
    }
  }
});

describe('target table', () => {
  test('covers exactly the advertised targets, not the deprecated aliases', () => {
    assert.deepEqual(Object.keys(TARGET_SPECS).sort(), [...READ_TARGETS].sort());
    for (const alias of Object.keys(DEPRECATED_TARGET_ALIASES)) assert.equal(alias in TARGET_SPECS, false);
  });

  test('targets that allow query are exactly the query table targets', () => {
    const allowQuery = READ_TARGETS.filter((target) => FIELD_RULES[target].query !== 'forbidden');
    assert.deepEqual([...allowQuery].sort(), [...QUERY_TARGETS].sort());
  });

  test('defaults: reference name authoring; workspace all for wiki, wiki_search, dag_search', () => {
    for (const target of READ_TARGETS) {
      const expected: Record<string, string> = {};
      if (target === 'reference') expected.name = 'authoring';
      if (target === 'wiki' || target === 'wiki_search' || target === 'dag_search')
        expected.workspace = 'all';
      assert.deepEqual({ ...TARGET_SPECS[target].defaults }, expected, target);
    }
  });

  test('step_log needs item and bodyStepName together; no other target pairs fields', () => {
    for (const target of READ_TARGETS) {
      const expected = target === 'step_log' ? [['item', 'bodyStepName']] : [];
      assert.deepEqual(TARGET_SPECS[target].together, expected, target);
    }
  });

  // The contract's "Output `uri`" column: targets whose target-mode result has a uri.
  const WITH_URI: ReadTarget[] = [
    'reference',
    'dag_spec',
    'wiki',
    'wiki_page',
    'run',
    'run_logs',
    'step_log',
    'foreach_items',
    'foreach_item',
  ];
  for (const target of READ_TARGETS) {
    const expected = WITH_URI.includes(target);
    test(`${target} ${expected ? 'has' : 'has no'} uri in target mode`, () => {
      assert.equal(TARGET_SPECS[target].uriInTargetMode, expected);
      assert.equal(TARGETS_WITH_TARGET_MODE_URI.includes(target), expected);
    });
  }
});

describe('field specs', () => {
  test('the field list is the contract input table in order', () => {
    assert.deepEqual(
      [...READ_INPUT_FIELDS],
      [
        'target',
        'name',
        'dagRunId',
        'subRunId',
        'stepName',
        'item',
        'bodyStepName',
        'query',
        'workspace',
        'path',
        'password',
        'search',
        'prefix',
        'cursor',
        'limit',
        'uri',
      ],
    );
  });

  for (const field of READ_INPUT_FIELDS) {
    test(`${field}: type, trimming and mode`, () => {
      const spec = FIELD_SPECS[field];
      assert.equal(spec.type, field === 'limit' ? 'integer' : 'string');
      assert.equal(spec.trim, field !== 'password' && field !== 'limit');
      assert.equal(spec.mode, field === 'uri' ? 'uri' : 'target');
    });
  }
});

describe('input JSON schema', () => {
  const properties = READ_INPUT_SCHEMA.properties as Record<string, Record<string, unknown>>;

  test('is a closed object listing every field', () => {
    assert.equal(READ_INPUT_SCHEMA.type, 'object');
    assert.equal(READ_INPUT_SCHEMA.additionalProperties, false);
    assert.deepEqual(Object.keys(properties), [...READ_INPUT_FIELDS]);
  });

  test('target enum lists the advertised targets, never the deprecated aliases', () => {
    assert.deepEqual(properties.target?.enum, [...READ_TARGETS]);
    for (const alias of Object.keys(DEPRECATED_TARGET_ALIASES)) {
      assert.equal(((properties.target?.enum ?? []) as unknown[]).includes(alias), false);
    }
  });

  for (const field of READ_INPUT_FIELDS) {
    test(`${field}: one type (null, still accepted as absent, is not advertised) and a description`, () => {
      const property = properties[field];
      assert.ok(property);
      assert.equal(property.type, FIELD_SPECS[field].type);
      assert.equal(typeof property.description, 'string');
      assert.ok((property.description as string).length > 10);
    });
  }

  test('limit is bounded 1..50', () => {
    assert.equal(properties.limit?.minimum, 1);
    assert.equal(properties.limit?.maximum, 50);
  });

  test('is plain JSON (survives a JSON round-trip unchanged)', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(READ_INPUT_SCHEMA)), READ_INPUT_SCHEMA);
  });
});
