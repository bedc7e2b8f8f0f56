/** What the audit log may say about raw tool arguments: known fields, cut text, secrets as flags only. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  auditText,
  MAX_AUDIT_TEXT,
  queryKeysOf,
  redactArguments,
  splitAuditUri,
} from '../../../src/audit/redact.ts';

describe('auditText', () => {
  test('trims strings, drops empty ones and non-strings', () => {
    assert.equal(auditText('  dag  '), 'dag');
    assert.equal(auditText('   '), undefined);
    assert.equal(auditText(42), undefined);
    assert.equal(auditText(null), undefined);
  });

  test('cuts to the limit in code points, never splitting a surrogate pair', () => {
    assert.equal(auditText('x'.repeat(MAX_AUDIT_TEXT + 10))?.length, MAX_AUDIT_TEXT);
    const emoji = '😀'.repeat(5);
    assert.equal(auditText(emoji, 3), '😀😀😀');
  });
});

describe('queryKeysOf', () => {
  test('sorted, distinct, decoded names; values never appear', () => {
    assert.deepEqual(queryKeysOf('status=secret&a%20b=1&status=2&&x+y=3'), ['a b', 'status', 'x y']);
  });

  test('a malformed escape in a name or a value makes the whole query <invalid>', () => {
    assert.deepEqual(queryKeysOf('a=%zz'), ['<invalid>']);
    assert.deepEqual(queryKeysOf('%E0%A4=1'), ['<invalid>']);
  });
});

describe('splitAuditUri', () => {
  test('drops the query values and the fragment', () => {
    assert.deepEqual(splitAuditUri('dagu://runs?status=failed&token=abc#frag'), {
      uri: 'dagu://runs',
      queryKeys: ['status', 'token'],
    });
    assert.deepEqual(splitAuditUri('dagu://dags/etl#x?y=1'), { uri: 'dagu://dags/etl' });
  });
});

describe('redactArguments', () => {
  test('anything that is not an object yields nothing', () => {
    for (const raw of [null, undefined, 'x', 3, ['target']]) assert.deepEqual(redactArguments(raw), {});
  });

  test('text fields copied, secrets and free text as flags, unknown fields and wrong types left out', () => {
    assert.deepEqual(
      redactArguments({
        target: ' dag_search ',
        name: 42,
        search: 'find my secret',
        cursor: 'opaque',
        password: 'hunter2',
        limit: 7,
        unknown: 'leak',
        query: '?status=failed&from=x',
      }),
      {
        target: 'dag_search',
        limit: 7,
        hasSearch: true,
        hasCursor: true,
        hasPassword: true,
        queryKeys: ['from', 'status'],
      },
    );
  });

  test('a path goes to workbookPath for the workbook target and to path otherwise', () => {
    assert.deepEqual(redactArguments({ target: 'workbook', path: 'a/b.xlsx' }), {
      target: 'workbook',
      workbookPath: 'a/b.xlsx',
    });
    assert.deepEqual(redactArguments({ target: 'wiki_page', path: 'notes/x' }), {
      target: 'wiki_page',
      path: 'notes/x',
    });
  });

  test('a uri keeps its path and query names; an empty secret and a non-finite limit count as absent', () => {
    assert.deepEqual(
      redactArguments({ uri: 'dagu://runs?status=x', password: '', search: null, limit: Number.NaN }),
      { uri: 'dagu://runs', queryKeys: ['status'] },
    );
  });
});
