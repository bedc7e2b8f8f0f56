/** The allowlist checks every target makes before it asks Dagu for anything. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AccessPolicy } from '../../../../src/core/access.ts';
import { ReadError } from '../../../../src/read/errors.ts';
import {
  assertDagReadable,
  assertWorkspaceReadable,
  canSee,
  hiddenAsMissing,
  workspaceOfLabels,
} from '../../../../src/read/upstream/access.ts';
import { failure } from '../../../../src/read/upstream/fetch.ts';
import type { ReadScope } from '../../../../src/read/upstream/scope.ts';

const access: AccessPolicy = {
  canReadDag: (name) => name.startsWith('etl-'),
  canReadWorkspace: (workspace) => workspace === 'ops',
  readsWorkbooks: false,
  unrestricted: false,
  everyWorkspace: false,
  exactWorkspaces: undefined,
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

test('a label set names its workspace as Dagu reads it: one agreeing, valid `workspace` label', () => {
  const cases: Array<[string[], string | undefined]> = [
    [[], 'default'],
    [['team=ops', 'nightly'], 'default'],
    [['workspace=ops'], 'ops'],
    // Dagu lower-cases label keys and values and trims them.
    [[' Workspace = Finance '], 'finance'],
    [['workspace=ops', 'workspace=ops'], 'ops'],
    // Empty, malformed, reserved or ambiguous: a workspace no grant matches.
    [['workspace'], undefined],
    [['workspace='], undefined],
    [['workspace=a/b'], undefined],
    [['workspace=all'], undefined],
    [['workspace=default'], undefined],
    [['workspace=ops', 'workspace=finance'], undefined],
  ];
  for (const [labels, workspace] of cases) {
    assert.equal(workspaceOfLabels(labels), workspace, JSON.stringify(labels));
  }
});

test('a narrowed caller sees what is labelled with its workspaces only; unlabelled is `default`; invalid is nobody narrowed', () => {
  const on = (generation: 1 | 2, policy: AccessPolicy = access) =>
    ({ ...scope, call: { access: policy }, deps: { dagu: { generation } } }) as unknown as ReadScope;
  const sees = (labels: string[], generation: 1 | 2 = 2, policy: AccessPolicy = access) =>
    canSee(on(generation, policy), { labels });
  assert.equal(sees(['workspace=ops']), true);
  assert.equal(sees(['workspace=finance']), false);
  assert.equal(sees([]), false, 'unlabelled belongs to default, which ops-only callers lack');
  assert.equal(sees(['workspace=a/b'], 2, { ...access, canReadWorkspace: () => true }), false);
  // Without workspace narrowing nothing is read from labels.
  assert.equal(sees(['workspace=a/b'], 2, { ...access, everyWorkspace: true }), true);
  // Dagu 1.x has no workspaces: a `workspace=…` tag means nothing there, everything is in default.
  assert.equal(sees(['workspace=ops'], 1), false);
  assert.equal(
    sees(['workspace=finance'], 1, { ...access, canReadWorkspace: (name) => name === 'default' }),
    true,
  );
});

test('a hidden DAG is answered with the very error a 404 from Dagu gives', () => {
  const subject = 'DAG "finance-report"';
  const hidden = hiddenAsMissing(scope, subject).toObject();
  const missing = failure(
    scope,
    { status: 404, body: { code: 'not_found', message: 'DAG not found' } },
    { subject },
  );
  assert.deepEqual(hidden, missing.toObject());
  assert.equal(hidden.code, 'resource_not_found');
  assert.equal(hidden.message, 'DAG "finance-report" does not exist.');
});
