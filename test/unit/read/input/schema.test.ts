/**
 * The model-facing input schema is derived from the target definitions: each field's description
 * names exactly the targets whose definition takes the field. The check below is what would catch a
 * hand-written list drifting from the definitions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { READ_TARGETS, type ReadTarget, TARGET_FIELDS } from '../../../../src/core/contract.ts';
import type { TargetDefinition } from '../../../../src/read/definition.ts';
import { TARGET_SPECS, type TargetSpec, targetSpecsOf } from '../../../../src/read/input/fields.ts';
import { fieldUses, READ_INPUT_SCHEMA, readInputSchema } from '../../../../src/read/input/schema.ts';
import { TARGET_DEFINITIONS } from '../../../../src/read/targets/index.ts';

type Schema = { properties: Record<string, { description?: string }> };

/** The target names a description lists: the words of its parenthesised parts that are targets. */
function listedTargets(description: string): string[] {
  const words = [...description.matchAll(/\(([^)]*)\)/g)].flatMap((match) => match[1]!.split(/[\s,;:]+/));
  return [...new Set(words.filter((word) => (READ_TARGETS as readonly string[]).includes(word)))].sort();
}

/** Fields whose description names other targets than the table says take the field. */
function disagreements(schema: Schema, specs: Readonly<Record<ReadTarget, TargetSpec>>): string[] {
  return TARGET_FIELDS.flatMap((field) => {
    const listed = listedTargets(schema.properties[field]?.description ?? '');
    const taking = fieldUses(specs, field)
      .map((use) => use.target)
      .sort();
    return JSON.stringify(listed) === JSON.stringify(taking)
      ? []
      : [`${field}: lists ${listed.join(', ')}; taken by ${taking.join(', ')}`];
  });
}

/** The definitions with `field` removed from `target`'s optional fields (and its pairs). */
function withoutOptional(target: ReadTarget, field: string): Record<ReadTarget, TargetDefinition> {
  const definition: TargetDefinition = TARGET_DEFINITIONS[target];
  const { optional, together = [] } = definition.fields;
  assert.ok(optional.includes(field as never), `${target} takes ${field} as an optional field`);
  const fields = {
    ...definition.fields,
    optional: optional.filter((candidate) => candidate !== field),
    together: together.filter((pair) => !pair.includes(field as never)),
  };
  return { ...TARGET_DEFINITIONS, [target]: { ...definition, fields } };
}

describe('input schema derived from the target definitions', () => {
  test('every field description names exactly the targets whose definition takes the field', () => {
    assert.deepEqual(disagreements(READ_INPUT_SCHEMA, TARGET_SPECS), []);
  });

  test('the target description names every target', () => {
    const description = READ_INPUT_SCHEMA.properties.target.description;
    const named = new Set(description.split(/[\s,;:/.]+/));
    assert.deepEqual(
      READ_TARGETS.filter((target) => !named.has(target)),
      [],
    );
  });

  test('a field removed from a definition leaves the advertised description with no other edit', () => {
    const altered = readInputSchema(targetSpecsOf(withoutOptional('step_log', 'subRunId')));
    assert.equal(
      altered.properties.subRunId.description,
      'Child DAG-run ID under the root run given by name and dagRunId (run, foreach_items, foreach_item).',
    );
    assert.notEqual(
      altered.properties.subRunId.description,
      READ_INPUT_SCHEMA.properties.subRunId.description,
    );
    // Only that field's description changed.
    const changed = TARGET_FIELDS.filter(
      (field) => altered.properties[field].description !== READ_INPUT_SCHEMA.properties[field].description,
    );
    assert.deepEqual(changed, ['subRunId']);

    // Terms follow too: without step_log's item, bodyStepName loses its partner.
    const unpaired = readInputSchema(targetSpecsOf(withoutOptional('step_log', 'item')));
    assert.equal(
      unpaired.properties.item.description,
      'Foreach item path: the index, or for a nested foreach the foreachParent of a body step, a dot and the index (foreach_item).',
    );
    assert.equal(
      unpaired.properties.bodyStepName.description,
      'Body step name or ID inside the foreach item (step_log).',
    );
  });

  test('a description written apart from the definitions fails the agreement check', () => {
    // The schema as it would be with subRunId's list left as it was after step_log dropped the field.
    const stale = readInputSchema(TARGET_SPECS);
    const altered = targetSpecsOf(withoutOptional('step_log', 'subRunId'));
    assert.deepEqual(disagreements(stale, altered), [
      'subRunId: lists foreach_item, foreach_items, run, step_log; taken by foreach_item, foreach_items, run',
    ]);
    // A hand-written list with a target too many is caught the same way.
    const handWritten: Schema = structuredClone(READ_INPUT_SCHEMA) as unknown as Schema;
    handWritten.properties.search!.description = 'Search text (dag_search, wiki_search, wiki).';
    assert.deepEqual(disagreements(handWritten, TARGET_SPECS), [
      'search: lists dag_search, wiki, wiki_search; taken by dag_search, wiki_search',
    ]);
  });
});
