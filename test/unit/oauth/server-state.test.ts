// What the built-in server keeps beside oidc-provider's models (src/oauth/server-state.ts), over the
// embedded store: kept across a reopen (a restart), secrets agreed once, a sign-in redeemed once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStateStore, serverRecords } from '../../../src/oauth/server-state.ts';
import { tempDir } from '../../support/temp.ts';

const LIFETIMES = { grantSeconds: 3600, pendingSeconds: 600 };
const CHECKS = { state: 's1', nonce: 'n1', codeVerifier: 'v1' };

test('accounts, consents and secrets outlive the process that wrote them (the store reopened)', async () => {
  const dir = tempDir('oauth-server-state-');
  const first = await openStateStore({ dir, redisUrl: undefined });
  const before = serverRecords(first, LIFETIMES);
  const secrets = await before.secrets();
  await before.saveAccount('alice', { sub: 'alice', groups: ['readers'] });
  await before.saveConsent('alice', 'https://host.example/client.json');
  await first.close();

  const second = await openStateStore({ dir, redisUrl: undefined });
  try {
    const after = serverRecords(second, LIFETIMES);
    assert.deepEqual(await after.secrets(), secrets, 'the cookie and form keys are the ones first made');
    assert.deepEqual(await after.accountClaims('alice'), { sub: 'alice', groups: ['readers'] });
    assert.equal(await after.hasConsent('alice', 'https://host.example/client.json'), true);
    assert.equal(await after.hasConsent('alice', 'other-client'), false);
    assert.equal(await after.accountClaims('bob'), undefined);
  } finally {
    await second.close();
  }
});

test('a consent is per user and client: a newline in either cannot forge another pair', async () => {
  const store = await openStateStore({ dir: tempDir('oauth-server-state-'), redisUrl: undefined });
  try {
    const records = serverRecords(store, LIFETIMES);
    await records.saveConsent('a\nb', 'c');
    assert.equal(await records.hasConsent('a', 'b\nc'), false);
    assert.equal(await records.hasConsent('a\nb', 'c'), true);
  } finally {
    await store.close();
  }
});

test('a pending sign-in is found by its state, and taken once', async () => {
  const store = await openStateStore({ dir: tempDir('oauth-server-state-'), redisUrl: undefined });
  try {
    const records = serverRecords(store, LIFETIMES);
    await records.savePending('s1', { uid: 'u1', checks: CHECKS });
    assert.deepEqual(await records.findPending('s1'), { uid: 'u1', checks: CHECKS });
    assert.deepEqual(await records.takePending('s1'), { uid: 'u1', checks: CHECKS });
    assert.equal(await records.takePending('s1'), undefined, 'a callback is redeemed once');
    assert.equal(await records.findPending('other'), undefined);
  } finally {
    await store.close();
  }
});

test('two callbacks with the same state at once: one takes the pending sign-in, the other finds none', async () => {
  const store = await openStateStore({ dir: tempDir('oauth-server-state-'), redisUrl: undefined });
  try {
    const records = serverRecords(store, LIFETIMES);
    await records.savePending('s1', { uid: 'u1', checks: CHECKS });
    const taken = await Promise.all([records.takePending('s1'), records.takePending('s1')]);
    assert.deepEqual(
      taken.filter((signIn) => signIn !== undefined),
      [{ uid: 'u1', checks: CHECKS }],
    );
  } finally {
    await store.close();
  }
});
