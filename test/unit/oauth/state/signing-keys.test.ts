// The signing keys over the embedded store: one key per period, the previous ones kept to verify.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { silentLog } from '../../../../src/core/log.ts';
import { openEmbeddedStore } from '../../../../src/oauth/state/embedded-store.ts';
import type { RecordStore } from '../../../../src/oauth/state/record-store.ts';
import { publicJwks, rotateSigningKeys, signingKeys } from '../../../../src/oauth/state/signing-keys.ts';
import { until } from '../../../support/record-store-contract.ts';
import { tempDir } from '../../../support/temp.ts';

let store: RecordStore;
before(async () => {
  store = await openEmbeddedStore(tempDir('oauth-keys-'));
});
after(async () => {
  await store?.close();
});

test('a period has one key however often it is asked for; the next period’s key is published before it signs', async () => {
  const policy = { rotateAfterSeconds: 3600, retainSeconds: 600 };
  const now = Date.now();
  const [first, again] = await Promise.all([
    signingKeys(store, policy, now),
    signingKeys(store, policy, now),
  ]);
  const period = Math.floor(now / 3600_000);
  assert.deepEqual(
    first.map((key) => key.period),
    [period, period + 1],
    'the current period’s key signs, the next one’s already verifies',
  );
  assert.deepEqual(
    again.map((key) => key.jwk.kid),
    first.map((key) => key.jwk.kid),
  );
  assert.deepEqual(
    [first[0]?.jwk.kty, first[0]?.jwk.crv, first[0]?.jwk.alg, first[0]?.jwk.use],
    ['EC', 'P-256', 'ES256', 'sig'],
  );
  const later = await signingKeys(store, policy, now + 3600_000);
  assert.deepEqual(
    later.map((key) => key.jwk.kid),
    [first[1]?.jwk.kid, later[1]?.jwk.kid, first[0]?.jwk.kid],
    'the key published the period before signs; the previous one still verifies',
  );
  assert.equal(later[1]?.period, period + 2);
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

test('rotateSigningKeys hands over the next period’s key, published the period before, when that period starts', async () => {
  const own = await openEmbeddedStore(tempDir('oauth-keys-'));
  const policy = { rotateAfterSeconds: 2, retainSeconds: 5 };
  const before = await signingKeys(own, policy);
  let stop = () => {};
  // The rotation's timer does not hold the process open; this deadline does, and fails a stuck rotation.
  let deadline: NodeJS.Timeout | undefined;
  const rotated = new Promise<string[]>((resolve, reject) => {
    deadline = setTimeout(() => reject(new Error('no rotation within 6 s')), 6_000);
    stop = rotateSigningKeys(own, policy, silentLog, (keys) => resolve(keys.map((key) => key.jwk.kid)));
  }).finally(() => clearTimeout(deadline));
  try {
    const kids = await rotated;
    assert.equal(kids[0], before[1]?.jwk.kid, 'the key published ahead now signs');
    assert.ok(kids.includes(before[0]?.jwk.kid ?? ''), 'the key that signed before still verifies');
  } finally {
    stop();
    await own.close();
  }
});
