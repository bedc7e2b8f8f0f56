// oidc-provider's storage (src/oauth/store.ts): entries by model, expiry, grant revocation, and no
// scope kept on a registered client (no pinning to the first scope).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { memoryAdapter } from '../../../src/oauth/store.ts';

describe('memoryAdapter', () => {
  test('keeps entries per model and drops a registered client scope', async () => {
    const { adapter, clear } = memoryAdapter();
    await adapter('Client').upsert(
      'c1',
      { client_id: 'c1', scope: 'dagu.read' } as never,
      undefined as never,
    );
    await adapter('Grant').upsert('c1', { accountId: 'a' } as never, 60);
    assert.deepEqual(await adapter('Client').find('c1'), { client_id: 'c1' });
    assert.deepEqual(await adapter('Grant').find('c1'), { accountId: 'a' });
    clear();
  });

  test('an expired entry is not found', async () => {
    const { adapter, clear } = memoryAdapter();
    await adapter('AccessToken').upsert('t', { jti: 't' } as never, -1);
    assert.equal(await adapter('AccessToken').find('t'), undefined);
    clear();
  });

  test('revokeByGrantId removes every entry of the grant; consume marks it consumed', async () => {
    const { adapter, clear } = memoryAdapter();
    await adapter('RefreshToken').upsert('r1', { grantId: 'g1' } as never, 60);
    await adapter('RefreshToken').upsert('r2', { grantId: 'g2' } as never, 60);
    await adapter('RefreshToken').consume('r2');
    await adapter('RefreshToken').revokeByGrantId('g1');
    assert.equal(await adapter('RefreshToken').find('r1'), undefined);
    assert.equal(typeof (await adapter('RefreshToken').find('r2'))?.consumed, 'number');
    clear();
  });

  test('finds an interaction by uid', async () => {
    const { adapter, clear } = memoryAdapter();
    await adapter('Session').upsert('s', { uid: 'u-1' } as never, 60);
    assert.deepEqual(await adapter('Session').findByUid('u-1'), { uid: 'u-1' });
    clear();
  });
});
