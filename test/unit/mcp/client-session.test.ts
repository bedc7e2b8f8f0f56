import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientInfoFromSessionId, clientSessionId, declaredClient } from '../../../src/mcp/client-session.ts';

test('a session id names the client it was issued to, and is unique per initialize', () => {
  const first = clientSessionId({ name: 'Claude Desktop', version: '1.2.3' });
  const second = clientSessionId({ name: 'Claude Desktop', version: '1.2.3' });
  assert.ok(first !== undefined && second !== undefined);
  assert.notEqual(first, second);
  // The transport allows visible ASCII only.
  assert.match(first, /^[\x21-\x7e]+$/);
  assert.deepEqual(clientInfoFromSessionId(first), { name: 'Claude Desktop', version: '1.2.3' });
});

test('names outside ASCII and a missing version survive the round trip', () => {
  const id = clientSessionId({ name: 'クライアント "x"', version: undefined });
  assert.match(id!, /^[\x21-\x7e]+$/);
  assert.deepEqual(clientInfoFromSessionId(id), { name: 'クライアント "x"', version: undefined });
});

test('a client without a name gets no session id', () => {
  assert.equal(clientSessionId({ name: undefined, version: '1' }), undefined);
});

test('any other header value names no client and never throws', () => {
  const claim = (value: unknown) => `c1.${Buffer.from(JSON.stringify(value)).toString('base64url')}.nonce`;
  for (const header of [
    undefined,
    '',
    'c1.',
    'c1.abc',
    'c1.!!!.x',
    '3f2c1e0a-uuid-of-another-server',
    claim({ name: 'x' }),
    claim([42, '1']),
    claim(null),
    `c1.${'A'.repeat(2000)}.x`,
    ['c1.a.b'],
  ]) {
    assert.equal(clientInfoFromSessionId(header), undefined, String(header));
  }
});

test('a declared name and version are cut to what the audit keeps', () => {
  const header = `c1.${Buffer.from(JSON.stringify(['n'.repeat(200), 'v'.repeat(100)])).toString('base64url')}.x`;
  assert.deepEqual(clientInfoFromSessionId(header), { name: 'n'.repeat(128), version: 'v'.repeat(64) });
});

test('a name and version whose cut falls inside an emoji keep it whole; so does the User-Agent', () => {
  const name = `${'n'.repeat(127)}😀`;
  const version = `${'v'.repeat(63)}😀`;
  const header = `c1.${Buffer.from(JSON.stringify([`${name}tail`, `${version}tail`])).toString('base64url')}.x`;
  assert.deepEqual(clientInfoFromSessionId(header), { name, version });
  const userAgent = `${'u'.repeat(127)}😀`;
  assert.equal(declaredClient(undefined, { 'user-agent': `${userAgent}tail` }).userAgent, userAgent);
});

test('the longest name and version the audit keeps survive the round trip, in any script', () => {
  for (const [name, version] of [
    ['😀'.repeat(128), '😀'.repeat(64)],
    ['ク'.repeat(128), 'ク'.repeat(64)],
    ['"'.repeat(128), '\\'.repeat(64)],
    ['\u0001'.repeat(128), '\ud83d'.repeat(64)],
  ]) {
    const id = clientSessionId({ name, version });
    assert.deepEqual(clientInfoFromSessionId(id), { name, version }, name);
  }
});

test("declaredClient: the message's clientInfo first, then the session id's, the User-Agent apart", () => {
  const sessionId = clientSessionId({ name: 'from-initialize', version: '1' })!;
  const headers = { 'mcp-session-id': sessionId, 'user-agent': `node ${'x'.repeat(200)}` };
  const ownInfo = { params: { clientInfo: { name: 'own', version: '2' } } };
  assert.deepEqual(declaredClient(ownInfo, headers), {
    clientName: 'own',
    clientVersion: '2',
    userAgent: headers['user-agent'].slice(0, 128),
  });
  assert.deepEqual(declaredClient({ params: {} }, headers).clientName, 'from-initialize');
  assert.deepEqual(declaredClient(undefined, {}), {
    clientName: undefined,
    clientVersion: undefined,
    userAgent: undefined,
  });
});
