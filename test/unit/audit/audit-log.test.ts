import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AuditEntry, createAuditLog, formatAuditLine } from '../../../src/audit/audit-log.ts';
import { redactArguments } from '../../../src/audit/redact.ts';
import { clientInfoOf } from '../../../src/mcp/request-message.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { tempDir } from '../../support/temp.ts';

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const entry = (extra: Partial<AuditEntry> = {}): AuditEntry => ({
  event: 'mcp.tool_call',
  requestId: 'req-1',
  identity: 'ci',
  outcome: 'ok',
  durationMs: 1.23456,
  ...extra,
});

describe('redactArguments', () => {
  it('keeps addressing fields and reduces password, search, cursor and query to flags and keys', () => {
    const digest = redactArguments({
      target: ' dag_search ',
      workspace: 'ops',
      search: 'customer 4711 salary',
      cursor: 'opaque-cursor-value',
      limit: 10,
      unknown: 'not copied',
    });
    assert.deepEqual(digest, {
      target: 'dag_search',
      workspace: 'ops',
      limit: 10,
      hasSearch: true,
      hasCursor: true,
    });

    const workbook = redactArguments({ target: 'workbook', path: '/data/q3.xlsx', password: ' s3cret ' });
    assert.deepEqual(workbook, { target: 'workbook', workbookPath: '/data/q3.xlsx', hasPassword: true });

    const logs = redactArguments({
      target: 'run_logs',
      name: 'etl',
      dagRunId: 'r1',
      query: 'tail=100&tail=5&x=%ZZ',
    });
    assert.deepEqual(logs.queryKeys, ['<invalid>']);
    assert.deepEqual(redactArguments({ target: 'runs', query: 'status=4&name=etl&status=1' }).queryKeys, [
      'name',
      'status',
    ]);
  });

  it('drops query values and fragments from a URI', () => {
    assert.deepEqual(redactArguments({ uri: 'dagu://runs?cursor=abc&name=etl#frag' }), {
      uri: 'dagu://runs',
      queryKeys: ['cursor', 'name'],
    });
  });

  it('copes with any input: non-objects, non-strings, huge strings', () => {
    for (const raw of [null, 'text', [1, 2], 42, undefined]) assert.deepEqual(redactArguments(raw), {});
    assert.deepEqual(redactArguments({ target: 5, name: { x: 1 }, search: null, password: '' }), {});
    assert.equal(redactArguments({ name: 'x'.repeat(10_000) }).name?.length, 256);
  });
});

describe('formatAuditLine', () => {
  it('writes snake_case keys in a fixed order, fills the time, and strips URI query values', () => {
    const line = formatAuditLine(
      entry({
        clientName: 'claude-code',
        protocolVersion: '2026-07-28',
        method: 'tools/call',
        tool: 'dagu_read',
        target: 'step_log',
        uri: 'dagu://runs/etl/r1/steps/load/log?tail=50',
        upstreamStatus: 200,
        workbookPath: undefined,
      }),
      () => new Date('2026-08-01T10:00:00.000Z'),
    );
    assert.equal(
      line,
      '{"time":"2026-08-01T10:00:00.000Z","event":"mcp.tool_call","request_id":"req-1","identity":"ci",' +
        '"client_name":"claude-code","protocol_version":"2026-07-28","method":"tools/call","tool":"dagu_read",' +
        '"target":"step_log","uri":"dagu://runs/etl/r1/steps/load/log","query_keys":["tail"],"outcome":"ok",' +
        '"duration_ms":1.235,"upstream_status":200}\n',
    );
  });

  it('keeps one record on one line whatever the strings hold', () => {
    const line = formatAuditLine(
      entry({ clientName: 'evil\n{"event":"forged"}', clientVersion: 'v'.repeat(500) }),
    );
    assert.equal(line.split('\n').length, 2);
    const record = JSON.parse(line) as Record<string, string>;
    assert.equal(record.client_name, 'evil\n{"event":"forged"}');
    assert.equal(record.client_version?.length, 64);
  });

  it('writes a client name ending in an emoji past the cut without an unpaired surrogate', () => {
    // The name as the MCP layer reads it from an initialize request, then as the audit writes it.
    const name = `${'x'.repeat(127)}😀`;
    const { name: clientName } = clientInfoOf({
      params: { clientInfo: { name: `${name}tail`, version: '1' } },
    });
    const line = formatAuditLine(entry({ clientName }));
    assert.doesNotMatch(line, /\\ud83d/);
    assert.equal((JSON.parse(line) as Record<string, string>).client_name, name);
  });

  it('writes an unpaired surrogate the caller sent as U+FFFD, the rest of the text as it was', () => {
    const line = formatAuditLine(entry({ clientName: 'broken\ud83d', userAgent: '\ude00ua' }));
    const record = JSON.parse(line) as Record<string, string>;
    assert.equal(record.client_name, 'broken\uFFFD');
    assert.equal(record.user_agent, '\uFFFDua');
  });
});

/** Where /dev/full exists (every write to it fails with ENOSPC). */
const ON_DEV_FULL = { skip: skipUnlessCI(existsSync('/dev/full') ? false : 'no /dev/full on this system') };

/** An audit log on /dev/full, and the failures its metrics counted. */
function fullDiskAudit() {
  const counted = { failures: 0 };
  const audit = createAuditLog('/dev/full', {
    signals: false,
    metrics: {
      auditWriteFailure: (records = 1) => {
        counted.failures += records;
      },
    },
  });
  return { audit, counted };
}

describe('audit log file', () => {
  it('appends one JSON line per record to an existing file, created 0640', () => {
    const file = join(tempDir(), 'audit.log');
    const first = createAuditLog(file, { signals: false });
    first.record(entry({ requestId: 'a' }));
    first.close();
    const second = createAuditLog(file, { signals: false });
    second.record(
      entry({ requestId: 'b', ...redactArguments({ target: 'workbook', path: '/x.xlsx', password: 'pw!' }) }),
    );
    second.close();
    const records = lines(file);
    assert.deepEqual(
      records.map((record) => record.request_id),
      ['a', 'b'],
    );
    assert.equal(records[1]!.workbook_path, '/x.xlsx');
    assert.equal(records[1]!.has_password, true);
    assert.ok(!readFileSync(file, 'utf8').includes('pw!'));
    assert.equal(statSync(file).mode & 0o777, 0o640);
  });

  it('reopens the file on SIGHUP after logrotate moved it', () => {
    const dir = tempDir();
    const file = join(dir, 'audit.log');
    const audit = createAuditLog(file);
    try {
      audit.record(entry({ requestId: 'before' }));
      renameSync(file, `${file}.1`);
      audit.record(entry({ requestId: 'moved' }));
      process.emit('SIGHUP', 'SIGHUP');
      audit.record(entry({ requestId: 'after' }));
    } finally {
      audit.close();
    }
    assert.deepEqual(
      lines(`${file}.1`).map((record) => record.request_id),
      ['before', 'moved'],
    );
    assert.deepEqual(
      lines(file).map((record) => record.request_id),
      ['after'],
    );
    assert.equal(audit.healthy(), true);
  });

  it('refuses to start when the file cannot be opened', () => {
    assert.throws(
      () => createAuditLog('/nonexistent-dir/audit.log'),
      /AUDIT_LOG: cannot open .* for append: ENOENT/,
    );
  });

  it('counts failed writes, reports them for /readyz, and never throws', ON_DEV_FULL, async () => {
    const { audit, counted } = fullDiskAudit();
    try {
      assert.equal(audit.healthy(), true);
      audit.record(entry());
      audit.record(entry());
      assert.equal(audit.healthy(), false);
      assert.equal(counted.failures, 2);
      assert.equal(audit.failures, 2);
      assert.equal(audit.lastError, 'write failed: ENOSPC');
      assert.deepEqual(await audit.readiness.check(), { ok: false, detail: 'write failed: ENOSPC' });
    } finally {
      audit.close();
    }
  });

  it('is unhealthy while a reopen fails, keeps writing to the old file, and recovers', async () => {
    const dir = tempDir();
    const logs = join(dir, 'logs');
    mkdirSync(logs);
    const file = join(logs, 'audit.log');
    const audit = createAuditLog(file, { signals: false });
    try {
      renameSync(logs, join(dir, 'logs.old'));
      audit.reopen();
      assert.equal(audit.healthy(), false);
      assert.match(audit.lastError ?? '', /^reopen failed: ENOENT/);
      audit.record(entry({ requestId: 'kept' }));
      assert.deepEqual(
        lines(join(dir, 'logs.old', 'audit.log')).map((record) => record.request_id),
        ['kept'],
      );
      mkdirSync(logs);
      await new Promise((resolve) => setTimeout(resolve, 1050));
      audit.record(entry({ requestId: 'recovered' }));
      assert.equal(audit.healthy(), true);
      assert.deepEqual(
        lines(file).map((record) => record.request_id),
        ['recovered'],
      );
      assert.equal(audit.failures, 0, 'no record was lost');
    } finally {
      audit.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes the lines queued in one turn with one write at its end, before written() settles', async () => {
    const file = join(tempDir(), 'audit.log');
    const audit = createAuditLog(file, { signals: false });
    try {
      assert.equal(audit.written(), undefined, 'nothing queued');
      audit.record(entry({ requestId: 'q1' }), 'turn');
      audit.record(entry({ requestId: 'q2' }), 'turn');
      const written = audit.written();
      assert.ok(written instanceof Promise);
      assert.equal(audit.written(), written, 'one settlement for the turn');
      assert.equal(readFileSync(file, 'utf8'), '', 'queued, not yet written');
      let settledAt: Array<Record<string, unknown>> | undefined;
      await written!.then(() => {
        settledAt = lines(file);
      });
      assert.deepEqual(
        settledAt?.map((record) => record.request_id),
        ['q1', 'q2'],
      );
      assert.equal(audit.written(), undefined, 'the queue is empty again');
    } finally {
      audit.close();
    }
  });

  it('keeps the order of the records when one is written at once while others are queued', async () => {
    const file = join(tempDir(), 'audit.log');
    const audit = createAuditLog(file, { signals: false });
    try {
      audit.record(entry({ requestId: 'queued' }), 'turn');
      const written = audit.written();
      audit.record(entry({ requestId: 'now' }));
      assert.deepEqual(
        lines(file).map((record) => record.request_id),
        ['queued', 'now'],
      );
      await written;
      audit.record(entry({ requestId: 'last' }), 'turn');
    } finally {
      audit.close();
    }
    assert.deepEqual(
      lines(file).map((record) => record.request_id),
      ['queued', 'now', 'last'],
      'close() writes what is queued',
    );
  });

  it('writes queued lines to the rotated file before reopening on SIGHUP', () => {
    const file = join(tempDir(), 'audit.log');
    const audit = createAuditLog(file);
    try {
      audit.record(entry({ requestId: 'queued' }), 'turn');
      renameSync(file, `${file}.1`);
      process.emit('SIGHUP', 'SIGHUP');
      audit.record(entry({ requestId: 'after' }), 'turn');
    } finally {
      audit.close();
    }
    assert.deepEqual(
      lines(`${file}.1`).map((record) => record.request_id),
      ['queued'],
    );
    assert.deepEqual(
      lines(file).map((record) => record.request_id),
      ['after'],
    );
  });

  it('counts every record of a failed queued write', ON_DEV_FULL, async () => {
    const { audit, counted } = fullDiskAudit();
    try {
      audit.record(entry(), 'turn');
      audit.record(entry(), 'turn');
      audit.record(entry(), 'turn');
      await audit.written();
      assert.equal(counted.failures, 3);
      assert.equal(audit.failures, 3);
      assert.equal(audit.healthy(), false);
    } finally {
      audit.close();
    }
  });

  it('writes to stdout when the target is stdout', () => {
    const written: string[] = [];
    const original = process.stdout.write;
    process.stdout.write = ((chunk: string, callback?: (error?: Error | null) => void) => {
      written.push(chunk);
      callback?.();
      return true;
    }) as typeof process.stdout.write;
    const audit = createAuditLog('stdout');
    try {
      audit.record(entry({ requestId: 'out' }));
    } finally {
      process.stdout.write = original;
      audit.close();
    }
    assert.equal(written.length, 1);
    assert.equal((JSON.parse(written[0]!) as { request_id: string }).request_id, 'out');
    assert.equal(audit.healthy(), true);
  });
});
