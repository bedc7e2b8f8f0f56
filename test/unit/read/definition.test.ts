/**
 * src/read/definition.ts: defineTarget only types a definition, so it must hand back the very object it
 * was given (the tables read its fields and handler as written); RUN_ECHO is the run family's echo list.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TARGET_FIELDS } from '../../../src/core/contract.ts';
import { defineTarget, RUN_ECHO } from '../../../src/read/definition.ts';
import { TARGET_DEFINITIONS } from '../../../src/read/targets/index.ts';
import { depsOf, fakeDagu, OPEN } from '../../support/read-deps.ts';

describe('defineTarget', () => {
  test('returns the definition it was given, unchanged, and its handler sees the typed request', async () => {
    const seen: string[] = [];
    const definition = {
      fields: {
        required: ['name'] as const,
        optional: ['workspace'] as const,
        defaults: { workspace: 'all' },
      },
      handle: async (request: { fields: { name: string; workspace: string } }) => {
        seen.push(`${request.fields.name}@${request.fields.workspace}`);
        return { data: { ok: true } };
      },
    };
    const defined = defineTarget(definition);
    assert.equal(defined, definition);
    assert.deepEqual(Object.keys(defined).sort(), ['fields', 'handle']);
    const result = await defined.handle(
      { mode: 'target', target: 'dag', fields: { name: 'etl', workspace: 'all' } },
      depsOf(fakeDagu(2, () => assert.fail('no Dagu call expected'))),
      OPEN,
    );
    assert.deepEqual(result, { data: { ok: true } });
    assert.deepEqual(seen, ['etl@all']);
  });
});

describe('RUN_ECHO', () => {
  test('names contract fields, and is the echo list of the run family targets', () => {
    assert.deepEqual([...RUN_ECHO], ['name', 'dagRunId', 'stepName', 'subRunId', 'item', 'bodyStepName']);
    for (const field of RUN_ECHO) assert.ok((TARGET_FIELDS as readonly string[]).includes(field), field);
    for (const target of ['step_log', 'foreach_items', 'foreach_item'] as const) {
      assert.equal(TARGET_DEFINITIONS[target].echo, RUN_ECHO, target);
    }
  });
});
