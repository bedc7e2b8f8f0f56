import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { upstreamError } from '../../../../src/read/upstream/failure.ts';

describe('upstreamError: HTTP status → contract code', () => {
  const body = { code: 'x', message: 'something' };
  const cases: Array<[number, 'target' | 'uri', string]> = [
    [404, 'target', 'resource_not_found'],
    [404, 'uri', 'resource_not_found'],
    [400, 'target', 'invalid_tool_input'],
    [400, 'uri', 'invalid_resource_uri'],
    [413, 'target', 'invalid_tool_input'],
    [414, 'uri', 'invalid_resource_uri'],
    [431, 'target', 'invalid_tool_input'],
    [431, 'uri', 'invalid_resource_uri'],
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

  it('says that 413, 414 and 431 mean the request was too large, even with a plain-text body', () => {
    const error = upstreamError(
      { status: 431, body: '431 Request Header Fields Too Large' },
      { mode: 'target', target: 'dag_search' },
    );
    assert.equal(
      error.message,
      'Dagu refused the request as too large (HTTP 431); shorten the query, search or names.',
    );
    assert.equal(error.field, undefined);
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
