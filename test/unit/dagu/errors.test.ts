import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeUpstreamMessage, scrubPaths, upstreamCode } from '../../../src/dagu/errors.ts';

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
