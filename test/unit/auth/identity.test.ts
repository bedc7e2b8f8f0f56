import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS_IDENTITY, accessPolicyFor, type Identity } from '../../../src/auth/identity.ts';
import { UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';

const identity = (extra: Partial<Identity>): Identity => ({
  kind: 'api_key',
  id: 'ci',
  name: 'ci',
  role: 'viewer',
  ...extra,
});

describe('access policy', () => {
  it('is unrestricted without allowlists', () => {
    assert.equal(accessPolicyFor(ANONYMOUS_IDENTITY), UNRESTRICTED_ACCESS);
    assert.equal(accessPolicyFor(identity({})).unrestricted, true);
  });

  it('matches DAG names against globs', () => {
    const policy = accessPolicyFor(identity({ dags: ['etl-*', 'report', 'team-?-daily', 'ops-{a,b}'] }));
    assert.equal(policy.unrestricted, false);
    for (const name of ['etl-nightly', 'etl-', 'report', 'team-x-daily', 'ops-a', 'ops-b']) {
      assert.equal(policy.canReadDag(name), true, name);
    }
    for (const name of ['report-2', 'xetl-nightly', 'team-xy-daily', 'ops-c', 'ETL-nightly', '']) {
      assert.equal(policy.canReadDag(name), false, name);
    }
    assert.equal(policy.canReadWorkspace('anything'), true, 'no workspace allowlist');
  });

  it('lets `*` match names with dots and restricts workspaces on their own', () => {
    const policy = accessPolicyFor(identity({ dags: ['*'], workspaces: ['ops', 'team-*'] }));
    assert.equal(policy.canReadDag('.hidden'), true);
    assert.equal(policy.canReadDag('a.b'), true);
    assert.equal(policy.canReadWorkspace('ops'), true);
    assert.equal(policy.canReadWorkspace('team-red'), true);
    assert.equal(policy.canReadWorkspace('default'), false);
  });

  it('narrows workspaces, and lists them exactly only when no pattern decides', () => {
    const dagsOnly = accessPolicyFor(identity({ dags: ['etl-*'] }));
    assert.deepEqual([dagsOnly.everyWorkspace, dagsOnly.exactWorkspaces], [true, undefined]);
    const patterns = accessPolicyFor(identity({ workspaces: ['ops', 'team-*'] }));
    assert.deepEqual([patterns.everyWorkspace, patterns.exactWorkspaces], [false, undefined]);
    const names = accessPolicyFor(identity({ workspaces: ['ops', 'data', 'ops'] }));
    assert.deepEqual([names.everyWorkspace, names.exactWorkspaces], [false, ['ops', 'data']]);
    // Workspace scopes are exact names, narrowed further by the key's or claim's patterns.
    const scoped = accessPolicyFor(
      identity({ workspaces: ['team-*'], scopeWorkspaces: ['team-red', 'ops'] }),
    );
    assert.deepEqual(scoped.exactWorkspaces, ['team-red']);
    assert.equal(scoped.canReadWorkspace('ops'), false);
    assert.equal(scoped.unrestricted, false);
  });

  it('lets a glob that cannot be compiled match nothing but its own literal text', () => {
    const policy = accessPolicyFor(identity({ dags: ['[z-a]'] }));
    for (const name of ['z', 'a', 'etl']) assert.equal(policy.canReadDag(name), false, name);
  });

  it('allows nothing for an empty allowlist, and reuses the policy of an identity', () => {
    const restricted = identity({ dags: [] });
    const policy = accessPolicyFor(restricted);
    assert.equal(policy.canReadDag('etl'), false);
    assert.equal(accessPolicyFor(restricted), policy);
  });
});
