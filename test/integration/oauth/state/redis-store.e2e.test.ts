// The fleet's store: a real redis-server on 127.0.0.1, under the RecordStore contract, and two handles
// (two replicas) agreeing on the signing key of a period.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openRedisStore } from '../../../../src/oauth/state/redis-store.ts';
import { signingKeys } from '../../../../src/oauth/state/signing-keys.ts';
import { recordStoreContract } from '../../../support/record-store-contract.ts';
import { type RedisServer, startRedis } from '../../../support/redis.ts';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

describe('Redis store', () => {
  recordStoreContract(() => openRedisStore({ url: redis.url }));
});

test('two replicas asking at once for a period signing key get the same one', async () => {
  const [one, two] = await Promise.all([
    openRedisStore({ url: redis.url }),
    openRedisStore({ url: redis.url }),
  ]);
  try {
    const policy = { rotateAfterSeconds: 3600, retainSeconds: 600 };
    const now = Date.now() + 7 * 24 * 3600_000;
    const [mine, theirs] = await Promise.all([signingKeys(one, policy, now), signingKeys(two, policy, now)]);
    assert.equal(mine[0]?.jwk.kid, theirs[0]?.jwk.kid);
    assert.equal(typeof mine[0]?.jwk.d, 'string');
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
});
