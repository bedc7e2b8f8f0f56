/** The allowlist checks every target makes before it asks Dagu for anything. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AccessPolicy } from '../../../../src/core/access.ts';
import { ReadError } from '../../../../src/read/errors.ts';
import { assertDagReadable, assertWorkspaceReadable } from '../../../../src/read/upstream/access.ts';
import type { ReadScope } from '../../../../src/read/upstream/scope.ts';

const access: AccessPolicy = {
  canReadDag: (name) => name.startsWith('etl-'),
  canReadWorkspace: (workspace) => workspace === 'ops',
  readsWorkbooks: false,
  unrestricted: false,
};
// The checks read only the caller's access and the request's target.
const scope = {
  call: { access },
  request: { mode: 'target', target: 'wiki', fields: {} },
} as unknown as ReadScope;

const fails = (code: string, message: RegExp) => (error: unknown) =>
  error instanceof ReadError && error.code === code && message.test(error.message);

test('a DAG the caller may read passes; another is unauthorized', () => {
  assertDagReadable(scope, 'etl-daily');
  assert.throws(
    () => assertDagReadable(scope, 'billing'),
    fails('unauthorized', /not authorized to read DAG "billing"/),
  );
});

test('a DAG named by its file name is not found, even when the name would be allowed', () => {
  for (const name of ['etl-daily.yaml', 'etl-daily.YML']) {
    assert.throws(() => assertDagReadable(scope, name), fails('resource_not_found', /no \.yaml extension/));
  }
});

test('workspaces: all and allowed ones pass; another is refused naming the target', () => {
  assertWorkspaceReadable(scope, 'all');
  assertWorkspaceReadable(scope, 'ops');
  assert.throws(
    () => assertWorkspaceReadable(scope, 'finance'),
    (error: unknown) =>
      error instanceof ReadError && error.code === 'unauthorized' && error.target === 'wiki',
  );
});
