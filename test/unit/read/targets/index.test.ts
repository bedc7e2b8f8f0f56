/**
 * The target table (src/read/targets/index.ts): every contract target has exactly one definition
 * (a family spreading a target another family also defines would silently replace it), the tables
 * derived from it agree, and its query targets come in the contract's order.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { READ_TARGETS, type ReadTarget, TARGET_FIELDS } from '../../../../src/core/contract.ts';
import { dagTargets } from '../../../../src/read/targets/dags.ts';
import { foreachTargets } from '../../../../src/read/targets/foreach.ts';
import {
  definitionOf,
  handlersOf,
  TARGET_DEFINITIONS,
  TARGET_HANDLERS,
} from '../../../../src/read/targets/index.ts';
import { referenceTargets } from '../../../../src/read/targets/reference.ts';
import { runTargets } from '../../../../src/read/targets/runs.ts';
import { searchTargets } from '../../../../src/read/targets/search.ts';
import { stepLogTargets } from '../../../../src/read/targets/step-log.ts';
import { wikiTargets } from '../../../../src/read/targets/wiki.ts';
import { workbookTargets } from '../../../../src/read/targets/workbook.ts';

const FAMILIES = {
  referenceTargets,
  dagTargets,
  runTargets,
  wikiTargets,
  stepLogTargets,
  foreachTargets,
  searchTargets,
  workbookTargets,
};

describe('TARGET_DEFINITIONS', () => {
  test('defines exactly the contract targets', () => {
    assert.deepEqual(Object.keys(TARGET_DEFINITIONS).sort(), [...READ_TARGETS].sort());
  });

  test('each target is defined by exactly one family, and the table holds that very definition', () => {
    const owners = new Map<string, string[]>();
    for (const [family, targets] of Object.entries(FAMILIES)) {
      for (const target of Object.keys(targets)) owners.set(target, [...(owners.get(target) ?? []), family]);
    }
    for (const target of READ_TARGETS) {
      assert.equal(
        owners.get(target)?.length,
        1,
        `${target}: ${owners.get(target)?.join(', ') ?? 'no family'}`,
      );
      const family = FAMILIES[owners.get(target)?.[0] as keyof typeof FAMILIES] as Record<string, unknown>;
      assert.equal(TARGET_DEFINITIONS[target], family[target], target);
    }
    assert.equal(owners.size, READ_TARGETS.length, 'no family defines a target the contract lacks');
  });

  test('the targets with a query come in the order of the contract query table', () => {
    const withQuery = Object.entries(TARGET_DEFINITIONS)
      .filter(([, definition]) => definition.query !== undefined)
      .map(([target]) => target);
    assert.deepEqual(withQuery, ['dags', 'runs', 'wiki', 'run_logs', 'step_log', 'foreach_items']);
  });

  test('fields: required and optional are contract fields, disjoint; pairs and defaults name optional ones', () => {
    const known = new Set<string>(TARGET_FIELDS);
    for (const [target, { fields, echo }] of Object.entries(TARGET_DEFINITIONS)) {
      const declared = [...fields.required, ...fields.optional];
      assert.ok(
        declared.every((field) => known.has(field)),
        target,
      );
      assert.equal(
        new Set(declared).size,
        declared.length,
        `${target}: a field is both required and optional`,
      );
      for (const pair of fields.together ?? []) {
        assert.ok(
          pair.every((field) => fields.optional.includes(field)),
          `${target}: together`,
        );
      }
      for (const field of Object.keys(fields.defaults ?? {})) {
        assert.ok((fields.optional as readonly string[]).includes(field), `${target}: default for ${field}`);
      }
      // A family shares one echo list (echoed only when supplied), so an echo need only be a contract field.
      for (const field of echo ?? []) assert.ok(known.has(field), `${target}: echo ${field}`);
    }
  });
});

describe('TARGET_HANDLERS, handlersOf and definitionOf', () => {
  test("every handler is its definition's, and definitionOf returns the table row", () => {
    for (const target of READ_TARGETS) {
      assert.equal(typeof TARGET_HANDLERS[target], 'function', target);
      assert.equal(TARGET_HANDLERS[target], TARGET_DEFINITIONS[target].handle, target);
      assert.equal(definitionOf(target), TARGET_DEFINITIONS[target]);
    }
  });

  test('handlersOf maps only the definitions it is given', () => {
    const some: Partial<Record<ReadTarget, (typeof TARGET_DEFINITIONS)[ReadTarget]>> = {
      dag: TARGET_DEFINITIONS.dag,
      step_log: TARGET_DEFINITIONS.step_log,
    };
    assert.deepEqual(handlersOf(some), {
      dag: TARGET_DEFINITIONS.dag.handle,
      step_log: TARGET_DEFINITIONS.step_log.handle,
    });
    assert.deepEqual(handlersOf({}), {});
  });
});
