// What a signed-in user may be granted (src/oauth/scope-policy.ts): from the user's upstream claims
// and AUTH_GROUPS_FILE, never from what the host asked for alone.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DAGU_CLAIMS } from '../../../src/auth/jwt.ts';
import { DEFAULT_SCOPES } from '../../../src/auth/scopes.ts';
import { decideScopes, keptClaims, scopeList } from '../../../src/oauth/scope-policy.ts';

const groupsFile = (yaml: string) => {
  const file = join(mkdtempSync(join(tmpdir(), 'scope-policy-')), 'groups.yaml');
  writeFileSync(file, yaml);
  return file;
};
const settings = (file?: string) => ({ scopes: DEFAULT_SCOPES, claims: DAGU_CLAIMS, groupsFile: file });

describe('decideScopes', () => {
  test('without a groups file, grants the read, workbook, workspace and OpenID scopes and refuses others', () => {
    const decision = decideScopes(
      { sub: 'alice' },
      ['openid', 'dagu.read', 'dagu.workbook', 'dagu.read:workspace/ops', 'admin'],
      settings(),
    );
    assert.deepEqual(decision, {
      ok: true,
      granted: ['openid', 'dagu.read', 'dagu.workbook', 'dagu.read:workspace/ops'],
      rejected: ['admin'],
    });
  });

  test('a workspace scope only for a workspace the groups file lets the user read', () => {
    const file = groupsFile('groups:\n  ops-team: { workspaces: ["ops-*"] }\n');
    const decision = decideScopes(
      { sub: 'alice', groups: ['ops-team'] },
      ['dagu.read:workspace/ops-eu', 'dagu.read:workspace/finance'],
      settings(file),
    );
    assert.deepEqual(decision, {
      ok: true,
      granted: ['dagu.read:workspace/ops-eu'],
      rejected: ['dagu.read:workspace/finance'],
    });
  });

  test('refuses a user no group of the file grants anything', () => {
    const file = groupsFile('groups:\n  ops-team: {}\n');
    const decision = decideScopes({ sub: 'bob', groups: ['sales'] }, ['dagu.read'], settings(file));
    assert.deepEqual(decision, { ok: false, reason: 'no group of AUTH_GROUPS_FILE grants this user access' });
  });

  test('ignores dags, workspaces and scope claims: they cannot widen the grant', () => {
    const file = groupsFile('groups:\n  ops-team: { workspaces: ["ops"] }\n');
    const decision = decideScopes(
      { sub: 'alice', groups: ['ops-team'], workspaces: ['*'], scope: 'dagu.read:workspace/finance' },
      ['dagu.read:workspace/finance'],
      settings(file),
    );
    assert.deepEqual(decision, { ok: true, granted: [], rejected: ['dagu.read:workspace/finance'] });
  });

  test('refuses claims without an identity', () => {
    assert.equal(decideScopes({ email: 'a@example.com' }, ['dagu.read'], settings()).ok, false);
  });
});

describe('keptClaims', () => {
  test('keeps the identity, role, groups, email and preferred_username claims only', () => {
    assert.deepEqual(
      keptClaims(
        {
          sub: 'a',
          role: 'viewer',
          groups: ['g'],
          email: 'e',
          preferred_username: 'p',
          at_hash: 'x',
          nonce: 'n',
        },
        DAGU_CLAIMS,
      ),
      { sub: 'a', role: 'viewer', groups: ['g'], email: 'e', preferred_username: 'p' },
    );
  });
});

test('scopeList: a scope parameter split on spaces, empty parts and a missing parameter giving none', () => {
  assert.deepEqual(scopeList('openid  dagu.read '), ['openid', 'dagu.read']);
  assert.deepEqual(scopeList(undefined), []);
});
