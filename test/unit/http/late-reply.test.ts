import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { lateReplyLogHook } from '../../../src/http/late-reply.ts';

/** A debug-level pino logger with the hook, writing its JSON lines into `lines`. */
function logger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  let counted = 0;
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level, hooks: { logMethod: lateReplyLogHook(() => counted++) } }, stream);
  return { log, lines, counted: () => counted };
}

const alreadySent = () =>
  Object.assign(new Error('Reply was already sent, did you forget to "return reply" in "/mcp" (POST)?'), {
    code: 'FST_ERR_REP_ALREADY_SENT',
  });

test("Fastify's already-sent warning becomes one debug line without the error or its stack, and is counted", () => {
  const { log, lines, counted } = logger('debug');
  log.child({ reqId: 'req-7' }).warn({ err: alreadySent() });
  assert.equal(counted(), 1);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.level, 20);
  assert.equal(lines[0]?.reqId, 'req-7');
  assert.equal(lines[0]?.lateReply, true);
  assert.equal(lines[0]?.err, undefined);
  assert.doesNotMatch(JSON.stringify(lines[0]), /stack|at /);
});

test('above debug the late reply is counted and writes nothing', () => {
  const { log, lines, counted } = logger('info');
  log.warn({ err: alreadySent() });
  assert.equal(counted(), 1);
  assert.deepEqual(lines, []);
});

test('every other line passes unchanged: other warnings, and the same error at another level', () => {
  const { log, lines, counted } = logger('debug');
  log.warn({ err: Object.assign(new Error('other'), { code: 'FST_ERR_OTHER' }) }, 'other warning');
  log.error({ err: alreadySent() }, 'logged as an error by someone else');
  log.warn('plain');
  assert.equal(counted(), 0);
  assert.deepEqual(
    lines.map((line) => [line.level, line.msg]),
    [
      [40, 'other warning'],
      [50, 'logged as an error by someone else'],
      [40, 'plain'],
    ],
  );
});
