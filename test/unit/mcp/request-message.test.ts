/** What every transport does with an incoming message: arguments out of band, trace context, client. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLIENT_INFO_META_KEY } from '@modelcontextprotocol/server';
import { clientInfoOf, liftArguments, traceContextOf } from '../../../src/mcp/request-message.ts';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const OTHER_PARENT = '00-11111111111111111111111111111111-2222222222222222-01';

describe('liftArguments', () => {
  test('tools/call arguments are kept raw and the SDK sees an empty object', () => {
    const args = { target: 'dags', limit: 'x' };
    const message = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'dagu_read', arguments: args },
    };
    const lifted = liftArguments(message);
    assert.deepEqual(lifted.raw, { value: args });
    assert.deepEqual(lifted.body, { ...message, params: { name: 'dagu_read', arguments: {} } });
    assert.deepEqual(message.params.arguments, args, 'the original message is not changed');
  });

  test('non-object arguments are kept as they are; absent ones read as {}', () => {
    assert.deepEqual(liftArguments({ method: 'tools/call', params: { name: 'x', arguments: [1] } }).raw, {
      value: [1],
    });
    assert.deepEqual(liftArguments({ method: 'tools/call', params: { name: 'x' } }).raw, { value: {} });
  });

  test('a resources/read without a string uri gets an empty uri; other messages pass untouched', () => {
    assert.deepEqual(liftArguments({ method: 'resources/read', params: { uri: 5 } }).body, {
      method: 'resources/read',
      params: { uri: '' },
    });
    assert.deepEqual(liftArguments({ method: 'resources/read' }).body, {
      method: 'resources/read',
      params: { uri: '' },
    });
    const list = { method: 'tools/list', params: {} };
    assert.equal(liftArguments(list).body, list);
    assert.equal(liftArguments(list).raw, undefined);
    assert.equal(liftArguments('not json-rpc').body, 'not json-rpc');
  });
});

describe('traceContextOf', () => {
  test('params._meta wins over headers; the JSON-RPC id is kept', () => {
    const message = { id: 'a1', params: { _meta: { traceparent: PARENT, tracestate: 'k=v' } } };
    assert.deepEqual(traceContextOf(message, { traceparent: OTHER_PARENT, tracestate: 'h=1' }), {
      rpcId: 'a1',
      traceparent: PARENT,
      tracestate: 'k=v',
    });
  });

  test('headers serve when _meta has no valid traceparent; malformed or long values are dropped', () => {
    assert.deepEqual(
      traceContextOf({ id: 7, params: { _meta: { traceparent: 'junk' } } }, { traceparent: PARENT }),
      {
        rpcId: 7,
        traceparent: PARENT,
      },
    );
    assert.deepEqual(traceContextOf({ params: {} }, { traceparent: 'bad', tracestate: 'x' }), {});
    assert.deepEqual(traceContextOf({}, { traceparent: PARENT, tracestate: 'x'.repeat(513) }), {
      traceparent: PARENT,
    });
    assert.deepEqual(traceContextOf({ id: null }), {});
  });
});

describe('clientInfoOf', () => {
  test("initialize's clientInfo, or the per-request envelope, cut to 128 and 64 characters", () => {
    assert.deepEqual(clientInfoOf({ params: { clientInfo: { name: 'claude', version: '1.2' } } }), {
      name: 'claude',
      version: '1.2',
    });
    const long = clientInfoOf({
      params: { _meta: { [CLIENT_INFO_META_KEY]: { name: 'n'.repeat(200), version: 'v'.repeat(100) } } },
    });
    assert.equal(long.name?.length, 128);
    assert.equal(long.version?.length, 64);
  });

  test('a name or version whose cut falls inside an emoji keeps the emoji whole (128 and 64 code points)', () => {
    const name = `${'n'.repeat(127)}😀`;
    const version = `${'v'.repeat(63)}😀`;
    const cut = clientInfoOf({ params: { clientInfo: { name: `${name}tail`, version: `${version}tail` } } });
    assert.deepEqual(cut, { name, version });
  });

  test('nothing usable gives undefined name and version', () => {
    assert.deepEqual(clientInfoOf({ params: { clientInfo: { name: 3 } } }), {
      name: undefined,
      version: undefined,
    });
    assert.deepEqual(clientInfoOf(null), { name: undefined, version: undefined });
  });
});
