/**
 * Every string field has a cap, checked before any other rule: a longer value (or one that is not
 * well-formed Unicode) is invalid_tool_input naming the field, invalid_resource_uri for `uri`. The
 * caps hold every value Dagu itself accepts (read from Dagu v2.15.1's source: internal/ir
 * DAGNameMaxLen 40, maxDAGRunIDLen 64; internal/spec maxStepNameLen 255; internal/wiki
 * maxPageIDLength 252) with room to spare.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIELD_MAX_LENGTH, type StringField } from '../../../../src/read/input/bounds.ts';
import { resolveReadInput } from '../../../../src/read/input/index.ts';
import { findReferenceTopic } from '../../../../src/reference/topics.ts';
import { assertError, errorOf } from '../../../support/read-errors.ts';

const DAGU_LIMITS: ReadonlyArray<[StringField, number]> = [
  ['name', 40],
  ['dagRunId', 64],
  ['subRunId', 64],
  ['stepName', 255],
  ['bodyStepName', 255],
  ['path', 252],
  ['prefix', 252],
];

/** A read that is valid except for the value of `field`. */
const READS: Readonly<Record<StringField, (value: string) => Record<string, unknown>>> = {
  target: (value) => ({ target: value }),
  name: (value) => ({ target: 'dag', name: value }),
  dagRunId: (value) => ({ target: 'run', name: 'a', dagRunId: value }),
  subRunId: (value) => ({ target: 'run', name: 'a', dagRunId: 'b', subRunId: value }),
  stepName: (value) => ({ target: 'step_log', name: 'a', dagRunId: 'b', stepName: value }),
  item: (value) => ({ target: 'foreach_item', name: 'a', dagRunId: 'b', stepName: 'c', item: value }),
  bodyStepName: (value) => ({
    target: 'step_log',
    name: 'a',
    dagRunId: 'b',
    stepName: 'c',
    item: 'd',
    bodyStepName: value,
  }),
  workspace: (value) => ({ target: 'wiki', workspace: value }),
  prefix: (value) => ({ target: 'wiki', prefix: value }),
  path: (value) => ({ target: 'workbook', path: value }),
  password: (value) => ({ target: 'workbook', path: 'a.xlsx', password: value }),
  cursor: (value) => ({ target: 'dag_search', search: 'x', cursor: value }),
  query: (value) => ({ target: 'dags', query: value }),
  search: (value) => ({ target: 'dag_search', search: value }),
  uri: (value) => ({ uri: value }),
};

/** A value of exactly `length` characters that the field's other rules would accept, where one exists. */
function sized(field: StringField, length: number): string {
  if (field === 'query') return `name=${'a'.repeat(length - 5)}`;
  if (field === 'uri') return `dagu://dags/${'a'.repeat(length - 12)}`;
  return 'a'.repeat(length);
}

describe('input bounds', () => {
  it('hold every value Dagu accepts, and at least 16 KiB of query, search and uri', () => {
    for (const [field, daguMax] of DAGU_LIMITS) assert.ok(FIELD_MAX_LENGTH[field] >= daguMax, field);
    for (const field of ['query', 'search', 'uri'] as const) assert.ok(FIELD_MAX_LENGTH[field] >= 16 * 1024);
  });

  for (const field of Object.keys(READS) as StringField[]) {
    const max = FIELD_MAX_LENGTH[field];
    it(`${field}: ${max} characters pass the bound, ${max + 1} are refused naming the field`, () => {
      const atCap = READS[field](sized(field, max));
      try {
        resolveReadInput(atCap);
      } catch (error) {
        assert.doesNotMatch((error as Error).message, /at most \d+ are accepted/, `${field} at its cap`);
      }
      const over = errorOf(() => resolveReadInput(READS[field](sized(field, max + 1))));
      assert.equal(over.code, field === 'uri' ? 'invalid_resource_uri' : 'invalid_tool_input');
      assert.equal(over.field, field);
      assert.equal(
        over.message,
        `The ${field} field is ${max + 1} characters long; at most ${max} are accepted.`,
      );
    });
  }

  it('are the table of the read-tool reference topic', () => {
    const text = findReferenceTopic('read-tool')?.text ?? '';
    const documented: Record<string, number> = {};
    for (const [, fields, max] of text.matchAll(/^\| ((?:`\w+`(?:, )?)+) \| (\d+) \|$/gm))
      for (const field of fields!.matchAll(/`(\w+)`/g)) documented[field[1]!] = Number(max);
    assert.deepEqual(documented, { ...FIELD_MAX_LENGTH });
  });

  it('are checked before any other rule: target, mode and field rules come after', () => {
    const long = 'x'.repeat(FIELD_MAX_LENGTH.name + 1);
    // An unsupported target, a forbidden field and a mixed request would each be another error.
    assertError(() => resolveReadInput({ target: 'nope', name: long }), {
      code: 'invalid_tool_input',
      field: 'name',
      target: 'nope',
    });
    assertError(() => resolveReadInput({ target: 'dags', name: long }), {
      code: 'invalid_tool_input',
      field: 'name',
      target: 'dags',
    });
    const uri = `dagu://dags/${'a'.repeat(FIELD_MAX_LENGTH.uri)}`;
    assertError(() => resolveReadInput({ uri }), { code: 'invalid_resource_uri', field: 'uri', uri });
    const both = errorOf(() => resolveReadInput({ target: 'dag', name: long, query: 'q'.repeat(20_000) }));
    assert.equal(both.code, 'invalid_tool_input');
    assert.deepEqual(both.details, { fields: ['name', 'query'] });
  });

  it('bound the parts of a uri as the same fields in target mode', () => {
    const name = 'a'.repeat(FIELD_MAX_LENGTH.name + 1);
    const uri = `dagu://dags/${name}/spec`;
    const error = assertError(() => resolveReadInput({ uri }), {
      code: 'invalid_resource_uri',
      field: 'uri',
      target: 'dag_spec',
      uri,
    });
    assert.equal(error.message, 'The name in the uri is 1025 characters long; at most 1024 are accepted.');
    assert.equal(resolveReadInput({ uri: `dagu://dags/${name.slice(1)}/spec` }).fields.name, name.slice(1));
  });

  it('refuse a lone surrogate (JSON can carry one, no URL or file name can)', () => {
    for (const [field, read] of [
      ['search', { target: 'dag_search', search: 'a\ud800' }],
      ['name', { target: 'dag', name: '\udc00x' }],
      ['path', { target: 'workbook', path: 'r\ud800.xlsx' }],
      ['uri', { uri: 'dagu://dags/\ud800' }],
    ] as const) {
      const error = errorOf(() => resolveReadInput(read));
      assert.equal(error.field, field);
      assert.equal(error.code, field === 'uri' ? 'invalid_resource_uri' : 'invalid_tool_input');
      assert.match(error.message, /is not well-formed Unicode/);
    }
    // A well-formed pair is one character, not a surrogate.
    assert.equal(resolveReadInput({ target: 'dag', name: 'emoji-😀' }).fields.name, 'emoji-😀');
  });
});
