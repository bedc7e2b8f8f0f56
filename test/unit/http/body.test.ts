/** The strict JSON body parser and the Content-Encoding refusal, through Fastify's inject. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  EMPTY_JSON,
  INVALID_JSON,
  INVALID_UTF8,
  installStrictJsonParser,
  refuseEncodedBodies,
} from '../../../src/http/body.ts';
import { REFUSALS } from '../../../src/http/refusals.ts';

let app: FastifyInstance;
before(async () => {
  app = Fastify();
  installStrictJsonParser(app);
  // The error code and the parsed body are echoed, so each case reads what the parser decided.
  app.setErrorHandler((error: { code?: string; statusCode?: number }, _request, reply) =>
    reply.code(error.statusCode ?? 500).send({ code: error.code }),
  );
  app.post('/echo', { preHandler: refuseEncodedBodies }, async (request) => ({ body: request.body }));
  await app.ready();
});
after(() => app.close());

const post = (payload: string | Buffer, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'application/json', ...headers },
    payload,
  });

describe('installStrictJsonParser', () => {
  test('valid JSON is parsed; a leading byte-order mark is dropped', async () => {
    assert.deepEqual((await post('{"a":[1,"é"]}')).json(), { body: { a: [1, 'é'] } });
    assert.deepEqual((await post('\ufeff{"b":true}')).json(), { body: { b: true } });
  });

  test('a __proto__ key is kept as data, not applied to the object', async () => {
    const answer = await post('{"__proto__":{"polluted":1},"x":2}');
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(Object.keys(answer.json().body), ['__proto__', 'x']);
    assert.equal(({} as { polluted?: number }).polluted, undefined);
  });

  test('invalid UTF-8 bytes are refused before decoding, never replaced with U+FFFD', async () => {
    const answer = await post(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    assert.equal(answer.statusCode, 400);
    assert.deepEqual(answer.json(), { code: INVALID_UTF8 });
  });

  test('an empty body and broken JSON get their own codes', async () => {
    const empty = await post('');
    assert.equal(empty.statusCode, 400);
    assert.deepEqual(empty.json(), { code: EMPTY_JSON });
    const broken = await post('{"a":');
    assert.equal(broken.statusCode, 400);
    assert.deepEqual(broken.json(), { code: INVALID_JSON });
  });
});

describe('refuseEncodedBodies', () => {
  test('no Content-Encoding, or only identity, passes', async () => {
    assert.equal((await post('{}')).statusCode, 200);
    assert.equal((await post('{}', { 'content-encoding': 'identity' })).statusCode, 200);
    assert.equal((await post('{}', { 'content-encoding': ' Identity , ' })).statusCode, 200);
  });

  test('any other coding gets 415, names it (lower-cased) and says which coding is accepted', async () => {
    const answer = await post('{}', { 'content-encoding': 'GZIP, identity, br' });
    assert.equal(answer.statusCode, 415);
    assert.equal(answer.headers['accept-encoding'], 'identity');
    const body = answer.json();
    assert.equal(body.error.code, REFUSALS.unsupported_encoding.rpcCode);
    assert.match(body.error.message, /Content-Encoding gzip, br is not accepted/);
  });

  test('the coding named back is cut to 64 characters', async () => {
    const answer = await post('{}', { 'content-encoding': 'x'.repeat(500) });
    assert.equal(answer.statusCode, 415);
    assert.match(answer.json().error.message, new RegExp(`Content-Encoding ${'x'.repeat(64)} is not`));
  });
});
