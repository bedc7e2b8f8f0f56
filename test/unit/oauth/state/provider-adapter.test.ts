// oidc-provider's adapter over the embedded store: the indexes it keeps, consume, and revoking a grant.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openEmbeddedStore } from '../../../../src/oauth/state/embedded-store.ts';
import { providerAdapter } from '../../../../src/oauth/state/provider-adapter.ts';
import type { RecordStore } from '../../../../src/oauth/state/record-store.ts';
import { tempDir } from '../../../support/temp.ts';

let store: RecordStore;
before(async () => {
  store = await openEmbeddedStore(tempDir('oauth-adapter-'));
});
after(async () => {
  await store?.close();
});

test('a session is found by its uid; an unknown uid or user code finds nothing', async () => {
  const session = providerAdapter(store)('Session');
  await session.upsert('s1', { uid: 'u1', accountId: 'alice' }, 600);
  assert.equal((await session.findByUid('u1'))?.accountId, 'alice');
  assert.equal(await session.findByUid('unknown'), undefined);
  assert.equal(await session.findByUserCode('unknown'), undefined);
});

test('consume marks a code used and keeps it', async () => {
  const codes = providerAdapter(store)('AuthorizationCode');
  await codes.upsert('c0', { grantId: 'g0' }, 60);
  await codes.consume('c0');
  const consumed = (await codes.find('c0'))?.consumed;
  assert.equal(typeof consumed, 'number');
  assert.ok(Math.abs((consumed as number) - Date.now() / 1000) < 5);
  await codes.consume('missing');
  assert.equal(await codes.find('missing'), undefined, 'consuming nothing writes nothing');
});

test('a refresh token consumed twice at once (two replicas): one consume succeeds, the other is refused invalid_grant and the grant revoked', async () => {
  const refresh = providerAdapter(store)('RefreshToken');
  const exp = Math.floor(Date.now() / 1000) + 3600;
  await refresh.upsert('r-race', { grantId: 'g-race', exp }, 3600);
  await refresh.upsert('r-other', { grantId: 'g-race', exp }, 3600);
  const outcomes = await Promise.allSettled([refresh.consume('r-race'), refresh.consume('r-race')]);
  assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
  const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
  assert.equal((refused.reason as { error?: string }).error, 'invalid_grant');
  assert.equal(await refresh.find('r-other'), undefined, "the grant's tokens are revoked, as on a replay");
});

test("revoking a grant removes its code, refresh token and access tokens, and nothing of another grant's", async () => {
  const adapter = providerAdapter(store);
  const [codes, refresh, access] = [
    adapter('AuthorizationCode'),
    adapter('RefreshToken'),
    adapter('AccessToken'),
  ];
  await codes.upsert('c1', { grantId: 'g1' }, 60);
  await refresh.upsert('r1', { grantId: 'g1' }, 3600);
  await access.upsert('a1', { grantId: 'g1' }, 300);
  await access.upsert('a2', { grantId: 'g2' }, 300);
  await refresh.revokeByGrantId('g1');
  assert.deepEqual(
    [await codes.find('c1'), await refresh.find('r1'), await access.find('a1')],
    [undefined, undefined, undefined],
  );
  assert.notEqual(await access.find('a2'), undefined);
  await access.destroy('a2');
  assert.equal(await access.find('a2'), undefined);
});

test('a client is stored without an index and without its registered scope (no pinning)', async () => {
  const clients = providerAdapter(store)('Client');
  await clients.upsert('https://host.example/client.json', {
    client_id: 'x',
    scope: 'dagu.read',
    grantId: 'not-an-index',
  });
  assert.deepEqual(await clients.find('https://host.example/client.json'), {
    client_id: 'x',
    grantId: 'not-an-index',
  });
  assert.deepEqual(await store.members('grant:not-an-index'), []);
});

test('a pre-registered client is found from the file as it is now, before a stored client of the same id', async () => {
  let file: Map<string, Record<string, unknown>> = new Map([
    ['team-agent', { client_id: 'team-agent', redirect_uris: ['https://a.example/cb'] }],
  ]);
  const clients = providerAdapter(store, () => file)('Client');
  await clients.upsert('team-agent', {
    client_id: 'team-agent',
    redirect_uris: ['https://stored.example/cb'],
  });
  assert.deepEqual((await clients.find('team-agent'))?.redirect_uris, ['https://a.example/cb']);
  file = new Map();
  assert.deepEqual(
    (await clients.find('team-agent'))?.redirect_uris,
    ['https://stored.example/cb'],
    'a client dropped from the file is no longer found there',
  );
  const sessions = providerAdapter(store, () => file)('Session');
  file = new Map([['file-only', { client_id: 'not-a-session' }]]);
  assert.equal(await sessions.find('file-only'), undefined, 'only the Client model reads the file');
});
