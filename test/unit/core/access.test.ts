/** The access policy that restricts nothing (stdio, anonymous, unrestricted keys). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';

test('UNRESTRICTED_ACCESS reads every DAG, every workspace and workbooks, and says it is unrestricted', () => {
  for (const name of ['etl', '', 'a/b', '*']) assert.equal(UNRESTRICTED_ACCESS.canReadDag(name), true);
  for (const workspace of ['default', 'ops', 'all']) {
    assert.equal(UNRESTRICTED_ACCESS.canReadWorkspace(workspace), true);
  }
  assert.equal(UNRESTRICTED_ACCESS.readsWorkbooks, true);
  assert.equal(UNRESTRICTED_ACCESS.unrestricted, true);
});
