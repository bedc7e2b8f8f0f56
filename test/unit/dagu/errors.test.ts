import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeUpstreamMessage, scrubPaths, upstreamCode, upstreamError } from '../../../src/dagu/errors.ts';

describe('upstreamError: HTTP status → contract code', () => {
  const body = { code: 'x', message: 'something' };
  const cases: Array<[number, 'target' | 'uri', string]> = [
    [404, 'target', 'resource_not_found'],
    [404, 'uri', 'resource_not_found'],
    [400, 'target', 'invalid_tool_input'],
    [400, 'uri', 'invalid_resource_uri'],
    [401, 'target', 'resource_unavailable'],
    [403, 'uri', 'resource_unavailable'],
    [499, 'target', 'resource_unavailable'],
    [500, 'target', 'resource_unavailable'],
    [502, 'target', 'resource_unavailable'],
    [503, 'target', 'resource_unavailable'],
    [504, 'target', 'resource_unavailable'],
    [409, 'target', 'internal_error'],
    [301, 'target', 'internal_error'],
    [418, 'target', 'internal_error'],
  ];
  for (const [status, mode, code] of cases) {
    it(`${status} in ${mode} mode → ${code}`, () => {
      const error = upstreamError({ status, body }, { mode, target: 'dag_spec' });
      assert.equal(error.code, code);
      assert.equal(error.upstreamStatus, status);
      assert.equal(error.target, 'dag_spec');
    });
  }

  it('a 400 in URI mode names the uri field; in target mode no single field', () => {
    assert.equal(upstreamError({ status: 400, body }, { mode: 'uri' }).field, 'uri');
    assert.equal(upstreamError({ status: 400, body }, { mode: 'target' }).field, undefined);
  });

  it("says that 401/403 is the gateway's own credential", () => {
    const error = upstreamError({ status: 401, body: undefined }, { mode: 'target' });
    assert.match(error.message, /gateway's own credential/);
    assert.match(error.message, /DAGU_API_TOKEN/);
  });

  it('a 404 with a subject says what does not exist', () => {
    const error = upstreamError(
      { status: 404, body: { code: 'not_found', message: 'DAG nope not found' } },
      { mode: 'target', subject: 'DAG "nope"' },
    );
    assert.equal(error.message, 'DAG "nope" does not exist.');
  });

  it('keeps a plain-text error body as the detail', () => {
    const error = upstreamError(
      {
        status: 400,
        body: "Invalid format for parameter status: multiple values for single value parameter 'status'",
      },
      { mode: 'target' },
    );
    assert.match(error.message, /Invalid format for parameter status/);
  });

  it('sets uri only when the context has one', () => {
    assert.equal(upstreamError({ status: 404, body }, { mode: 'target' }).uri, undefined);
    assert.equal(upstreamError({ status: 404, body }, { mode: 'target', uri: 'dagu://x' }).uri, 'dagu://x');
  });
});

describe('message safety', () => {
  it('replaces absolute POSIX and Windows paths', () => {
    assert.equal(
      scrubPaths('error reading /tmp/dagu/logs/a.log: open /var/x: no such file'),
      'error reading <path> open <path> no such file',
    );
    assert.equal(scrubPaths('failed at C:\\dagu\\logs\\a.log now'), 'failed at <path> now');
    assert.equal(scrubPaths('see "/etc/dagu/config.yaml"'), 'see "<path>"');
  });

  it('leaves URLs, relative paths and plain words alone', () => {
    assert.equal(scrubPaths('see http://host:8080/api/v1/dags'), 'see http://host:8080/api/v1/dags');
    assert.equal(scrubPaths('dag-run ID ../../x not found'), 'dag-run ID ../../x not found');
    assert.equal(scrubPaths('a/b and c'), 'a/b and c');
  });

  it('keeps the first line only and drops stack traces and control characters', () => {
    assert.equal(safeUpstreamMessage('first\ngoroutine 1 [running]:\nmain.go:1'), 'first');
    assert.equal(safeUpstreamMessage('goroutine 7 [running]:'), '');
    assert.equal(safeUpstreamMessage('panic: runtime error'), '');
    assert.equal(safeUpstreamMessage('tab\there\u0007bell'), 'tab here bell');
    assert.equal(safeUpstreamMessage(42), '');
  });

  it('caps long messages', () => {
    const message = safeUpstreamMessage('x'.repeat(5000));
    assert.ok(message.length <= 301);
    assert.ok(message.endsWith('…'));
  });

  it('reads Dagu error codes', () => {
    assert.equal(upstreamCode({ code: 'not_found', message: '' }), 'not_found');
    assert.equal(upstreamCode('text'), undefined);
    assert.equal(upstreamCode(undefined), undefined);
  });
});
