/** Rules on field values per target, and the fields that are one path segment. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ALL_WORKSPACES } from '../../../../src/core/contract.ts';
import { LIMIT_RANGE } from '../../../../src/read/input/fields.ts';
import {
  dotSegmentField,
  segmentNoun,
  VALUE_RULES_BY_TARGET,
} from '../../../../src/read/input/value-rules.ts';

const rule = (target: keyof typeof VALUE_RULES_BY_TARGET, field: string) => {
  const found = VALUE_RULES_BY_TARGET[target].find((candidate) => candidate.field === field);
  assert.ok(found, `${target}.${field} has a rule`);
  return found;
};

describe('VALUE_RULES_BY_TARGET', () => {
  test('limit of the search targets is an integer in range', () => {
    for (const target of ['dag_search', 'wiki_search'] as const) {
      const limit = rule(target, 'limit');
      assert.equal(limit.problem(LIMIT_RANGE.min), undefined);
      assert.equal(limit.problem(LIMIT_RANGE.max), undefined);
      assert.match(limit.problem(LIMIT_RANGE.max + 1) ?? '', /from 1 through 50/);
      assert.match(limit.problem(0) ?? '', /from 1 through 50/);
      assert.match(limit.problem('5') ?? '', /integer/);
    }
  });

  test('a wiki page names one workspace and a valid page path', () => {
    assert.match(rule('wiki_page', 'workspace').problem(ALL_WORKSPACES) ?? '', /must name one workspace/);
    assert.equal(rule('wiki_page', 'workspace').problem('default'), undefined);
    assert.match(
      rule('wiki_page', 'path').problem('a//b') ?? '',
      /^must be a Wiki page path without \.md: it /,
    );
    assert.equal(rule('wiki_page', 'path').problem('a/b'), undefined);
  });

  test('a workbook path must end in .xlsx or .xlsm (any case), and its message names the file', () => {
    const path = rule('workbook', 'path');
    assert.equal(path.problem('dir/Book.XLSX'), undefined);
    assert.equal(path.problem('book.xlsm'), undefined);
    assert.equal(path.problem('book.xls'), 'must name an .xlsx or .xlsm file');
    assert.equal(
      path.message?.('dir/old.xls'),
      'old.xls: only .xlsx and .xlsm workbooks are supported; save as .xlsx',
    );
  });

  test('a wiki prefix is a page path prefix; targets without rules have none', () => {
    assert.match(rule('wiki', 'prefix').problem('x/') ?? '', /^must be a Wiki page path prefix: it /);
    assert.equal(rule('wiki_search', 'prefix').problem('x'), undefined);
    assert.deepEqual(VALUE_RULES_BY_TARGET.runs, []);
  });
});

describe('dotSegmentField', () => {
  test('the first segment field, in table order, that is . or ..', () => {
    assert.equal(dotSegmentField('run', { name: 'etl', dagRunId: '..' }), 'dagRunId');
    assert.equal(dotSegmentField('step_log', { name: '.', stepName: '..' }), 'name');
    assert.equal(dotSegmentField('run', { name: 'etl', dagRunId: '...' }), undefined);
  });

  test('workspace is a segment only of the wiki listing and page', () => {
    assert.equal(dotSegmentField('wiki', { workspace: '..' }), 'workspace');
    assert.equal(dotSegmentField('wiki_search', { workspace: '..' }), undefined);
  });
});

describe('segmentNoun', () => {
  test('names the field as messages say it', () => {
    assert.equal(segmentNoun('run', 'dagRunId'), 'DAG-run');
    assert.equal(segmentNoun('dag', 'name'), 'DAG');
    assert.equal(segmentNoun('reference', 'name'), 'reference topic');
    assert.equal(segmentNoun('foreach_item', 'bodyStepName'), 'body step');
    assert.equal(segmentNoun('dag_search', 'limit'), 'limit');
  });
});
