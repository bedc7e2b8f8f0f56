// The signing keys over the embedded store: one key per period, the previous ones kept to verify.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openEmbeddedStore } from '../../../../src/oauth/state/embedded-store.ts';
import type { RecordStore } from '../../../../src/oauth/state/record-store.ts';
import { publicJwks, signingKeys } from '../../../../src/oauth/state/signing-keys.ts';
import { until } from '../../../support/record-store-contract.ts';
import { tempDir } from '../../../support/temp.ts';

let store: RecordStore;
before(async () => {
  store = await openEmbeddedStore(tempDir('oauth-keys-'));
});
after(async () => {
  await store?.close();
});

test('a period has one key however often it is asked for; the next period signs with a new one', async () => {
  const policy = { rotateAfterSeconds: 3600, retainSeconds: 600 };
  const now = Date.now();
  const [first, again] = await Promise.all([
    signingKeys(store, policy, now),
    signingKeys(store, policy, now),
  ]);
  assert.equal(first.length, 1);
  assert.equal(again[0]?.jwk.kid, first[0]?.jwk.kid);
  assert.deepEqual(
    [first[0]?.jwk.kty, first[0]?.jwk.crv, first[0]?.jwk.alg, first[0]?.jwk.use],
    ['EC', 'P-256', 'ES256', 'sig'],
  );
  const later = await signingKeys(store, policy, now + 3600_000);
  assert.equal(later.length, 2);
  assert.notEqual(later[0]?.jwk.kid, first[0]?.jwk.kid, 'the newest signs');
  assert.equal(later[1]?.jwk.kid, first[0]?.jwk.kid, 'the previous one still verifies');
});

test('a key is gone once its period and the retention are over', async () => {
  // A store of its own: the first test's keys of a later period would sort first here.
  const own = await openEmbeddedStore(tempDir('oauth-keys-'));
  try {
    const policy = { rotateAfterSeconds: 1, retainSeconds: 1 };
    const kid = (await signingKeys(own, policy))[0]?.jwk.kid;
    assert.equal(typeof kid, 'string');
    await until(
      async () => !(await signingKeys(own, policy)).some((key) => key.jwk.kid === kid),
      6_000,
      'the key to expire',
    );
  } finally {
    await own.close();
  }
});

test('the public JWKS carries no private part', async () => {
  const jwks = publicJwks(await signingKeys(store, { rotateAfterSeconds: 3600, retainSeconds: 600 }));
  assert.ok(jwks.keys.length > 0);
  for (const key of jwks.keys) {
    assert.equal(key.d, undefined);
    assert.equal(typeof key.x, 'string');
  }
});
