import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_SCOPES, grantedScopes, scopeGrant, supportedScopes } from '../../../src/auth/scopes.ts';

describe('grantedScopes', () => {
  test('reads `scope` (space-separated) and `scp` (a list or a string), without duplicates', () => {
    assert.deepEqual(grantedScopes({ scope: 'openid  dagu.read dagu.read' }), ['openid', 'dagu.read']);
    assert.deepEqual(grantedScopes({ scp: ['dagu.read', 'dagu.workbook'] }), ['dagu.read', 'dagu.workbook']);
    assert.deepEqual(grantedScopes({ scp: 'dagu.read' }), ['dagu.read']);
    assert.equal(grantedScopes({ sub: 'x' }), undefined);
  });

  test('a malformed claim is false (the token is refused), never an empty grant', () => {
    for (const claims of [
      { scope: 7 },
      { scp: [1] },
      { scope: 'a "b"' },
      { scp: ['a\\b'] },
      { scp: Array(257).fill('x') },
    ]) {
      assert.equal(grantedScopes(claims), false, JSON.stringify(claims).slice(0, 40));
    }
  });
});

describe('scopeGrant', () => {
  test('the read scope is required; the workbook scope adds workbooks; workspace scopes narrow', () => {
    assert.deepEqual(scopeGrant([], DEFAULT_SCOPES), {
      missing: ['dagu.read'],
      readsWorkbooks: false,
      workspaces: undefined,
    });
    assert.deepEqual(scopeGrant(['dagu.workbook'], DEFAULT_SCOPES).missing, ['dagu.read']);
    assert.deepEqual(scopeGrant(['dagu.read', 'dagu.workbook'], DEFAULT_SCOPES), {
      missing: [],
      readsWorkbooks: true,
      workspaces: undefined,
    });
    assert.deepEqual(scopeGrant(['dagu.read:workspace/ops', 'dagu.read:workspace/'], DEFAULT_SCOPES), {
      missing: [],
      readsWorkbooks: false,
      workspaces: ['ops'],
    });
  });

  test('names come from the settings', () => {
    const custom = { read: 'mcp:read', workbook: 'mcp:xlsx', workspacePrefix: 'ws:' };
    assert.deepEqual(supportedScopes(custom), ['mcp:read', 'mcp:xlsx']);
    assert.deepEqual(scopeGrant(['dagu.read'], custom).missing, ['mcp:read']);
    assert.deepEqual(scopeGrant(['ws:a'], custom).workspaces, ['a']);
  });
});
