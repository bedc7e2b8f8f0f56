// The per-identity rate limit (429 + Retry-After, only tool calls counted) and API key file reloads
// (file change in process; SIGHUP to a real gateway process) end to end, with both MCP clients.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  bearer,
  type CapturedGateway,
  httpFailure,
  keysYaml,
  metricSum,
  newApiKey,
  postMcp,
  replaceFile,
  scrape,
  startCapturedGateway,
  tempDir,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { CONNECTORS } from '../../support/gateway.ts';
import { gatewayOnDagu } from '../../support/gateway-on-dagu.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

let dagu: TestDagu;
before(async () => {
  dagu = await getTestDagu();
});
after(() => dagu?.stop());

/** The status `postMcp` gets with this key (a tools/call of the reference list: no Dagu call). */
const statusWith = async (url: string, key: string) => (await postMcp(url, bearer(key))).status;

describe('per-identity rate limit (RATE_LIMIT_PER_MINUTE=3)', () => {
  const KEYS = {
    modern: newApiKey('rlmodern'),
    legacy: newApiKey('rllegacy'),
    spare: newApiKey('rlspare'),
    resources: newApiKey('rlresources'),
  };
  let gateway: CapturedGateway;
  before(async () => {
    gateway = await startCapturedGateway({
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      RATE_LIMIT_PER_MINUTE: '3',
      AUTH_API_KEYS_FILE: writeKeysFile([
        { name: 'rl-modern', key: KEYS.modern },
        { name: 'rl-legacy', key: KEYS.legacy },
        { name: 'rl-spare', key: KEYS.spare },
        { name: 'rl-resources', key: KEYS.resources },
      ]),
    });
  });
  after(() => gateway?.close());

  for (const era of ['modern', 'legacy'] as const) {
    test(`${era} client: connect and list calls are free; the 4th tools/call gets 429 rate_limited`, async () => {
      const rateLimited = async () =>
        metricSum((await scrape(gateway.baseUrl)).samples, 'mcp_gateway_rate_limited_total', {
          reason: 'rate',
        });
      const before = await rateLimited();
      const client = await CONNECTORS[era](gateway.mcpUrl, bearer(KEYS[era]));
      try {
        for (let round = 0; round < 3; round++) {
          await client.listTools();
          await client.listResources();
          await client.listResourceTemplates();
        }
        for (let call = 1; call <= 3; call++) {
          const result = await client.callTool({ target: 'references' });
          assert.notEqual(result.isError, true, `call ${call}`);
        }
        // What each client throws: v2 SdkHttpError {status: 429, data.text}; v1 StreamableHTTPError {code: 429}.
        await assert.rejects(client.callTool({ target: 'references' }), (error: unknown) => {
          const { status, body } = httpFailure(error);
          assert.equal(status, 429, String(error));
          assert.equal(body.code, 'rate_limited');
          assert.match(String(body.message), /at most 3 tool calls per minute/);
          return true;
        });
        // Lists are still served once the tool calls are used up.
        assert.ok((await client.listTools()).tools.length > 0);
      } finally {
        await client.close();
      }

      const raw = await postMcp(gateway.mcpUrl, bearer(KEYS[era]));
      assert.equal(raw.status, 429);
      const retryAfter = Number(raw.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
        `Retry-After ${retryAfter}`,
      );
      assert.equal(raw.json().code, 'rate_limited');

      const record = gateway.auditLines().at(-1)!;
      assert.deepEqual(
        [
          record.event,
          record.identity,
          record.method,
          record.tool,
          record.outcome,
          record.reason,
          record.http_status,
        ],
        ['mcp.request_denied', `rl-${era}`, 'tools/call', 'dagu_read', 'rate_limited', 'rate', 429],
      );
      assert.equal((await rateLimited()) - before, 2);
    });
  }

  test('resources/read counts like a tool call', async () => {
    const client = await CONNECTORS.modern(gateway.mcpUrl, bearer(KEYS.resources));
    try {
      for (let read = 0; read < 3; read++) await client.readResource('dagu://reference/tools');
      await assert.rejects(client.readResource('dagu://reference/tools'), (error: unknown) => {
        assert.equal(httpFailure(error).status, 429);
        return true;
      });
      await assert.rejects(client.callTool({ target: 'references' }), (error: unknown) => {
        assert.equal(httpFailure(error).status, 429);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  test('the limit is per identity: another key is still served', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const client = await CONNECTORS[era](gateway.mcpUrl, bearer(KEYS.spare));
      try {
        assert.notEqual((await client.callTool({ target: 'references' })).isError, true, era);
      } finally {
        await client.close();
      }
    }
    // and the exhausted ones are still refused
    assert.equal(await statusWith(gateway.mcpUrl, KEYS.modern), 429);
    assert.equal(await statusWith(gateway.mcpUrl, KEYS.legacy), 429);
  });
});

describe('per-identity concurrency cap (MAX_CONCURRENT_CALLS_PER_IDENTITY=1)', () => {
  const KEY = newApiKey('busy');
  const OTHER = newApiKey('idle');
  const on = gatewayOnDagu(() => ({
    dagu,
    env: {
      MAX_CONCURRENT_CALLS_PER_IDENTITY: '1',
      AUTH_API_KEYS_FILE: writeKeysFile([
        { name: 'busy', key: KEY },
        { name: 'idle', key: OTHER },
      ]),
    },
  }));

  test('a second call while the first waits for Dagu gets 429 (concurrency); other callers are served', async () => {
    const client = await CONNECTORS.modern(on.gateway.mcpUrl, bearer(KEY));
    try {
      on.proxy.hold();
      const first = client.callTool({ target: 'dags' });
      await on.proxy.held(1);
      const second = await postMcp(on.gateway.mcpUrl, bearer(KEY));
      assert.equal(second.status, 429);
      assert.equal(second.headers.get('retry-after'), '1');
      assert.equal(second.json().code, 'rate_limited');
      assert.match(String(second.json().message), /concurrent/);
      assert.equal(on.gateway.auditLines().at(-1)?.reason, 'concurrency');
      assert.equal(await statusWith(on.gateway.mcpUrl, OTHER), 200);
      on.proxy.release();
      assert.notEqual((await first).isError, true);
      // The slot is free again once the first call has answered.
      assert.equal(await statusWith(on.gateway.mcpUrl, KEY), 200);
    } finally {
      on.proxy.release();
      await client.close();
    }
    const samples = (await scrape(on.gateway.baseUrl)).samples;
    assert.equal(metricSum(samples, 'mcp_gateway_rate_limited_total', { reason: 'concurrency' }), 1);
    assert.equal(metricSum(samples, 'mcp_gateway_inflight_calls'), 0);
  });
});

describe('API key file reload without a restart', () => {
  const OLD = newApiKey('old');
  const STAY = newApiKey('stay');
  const NEW = newApiKey('new');
  let keysFile: string;
  const on = gatewayOnDagu(() => {
    keysFile = writeKeysFile([
      { name: 'old', key: OLD },
      { name: 'stay', key: STAY },
    ]);
    return { dagu, env: { AUTH_API_KEYS_FILE: keysFile } };
  });

  const reloads = async (result: 'ok' | 'error') =>
    metricSum((await scrape(on.gateway.baseUrl)).samples, 'mcp_gateway_api_keys_reloads_total', { result });

  test('editing the file adds a key and removes one; a call in flight with the removed key completes', async () => {
    assert.equal(await statusWith(on.gateway.mcpUrl, OLD), 200);
    assert.equal(await statusWith(on.gateway.mcpUrl, NEW), 401);
    const okBefore = await reloads('ok');
    const modern = await CONNECTORS.modern(on.gateway.mcpUrl, bearer(OLD));
    const legacy = await CONNECTORS.legacy(on.gateway.mcpUrl, bearer(OLD));
    try {
      // A read held at Dagu's door: in flight across the reload.
      on.proxy.hold();
      const inFlight = modern.callTool({ target: 'dags', query: 'perPage=200' });
      await on.proxy.held(1);

      replaceFile(
        keysFile,
        keysYaml([
          { name: 'stay', key: STAY },
          { name: 'new', key: NEW },
        ]),
      );
      const deadline = Date.now() + 5000;
      while ((await statusWith(on.gateway.mcpUrl, NEW)) !== 200) {
        assert.ok(Date.now() < deadline, 'the new key was not accepted within 5 s');
        await sleep(25);
      }
      assert.equal(await statusWith(on.gateway.mcpUrl, OLD), 401);
      assert.equal(await statusWith(on.gateway.mcpUrl, STAY), 200);
      // A connected client whose key was removed is refused on its next call.
      await assert.rejects(legacy.callTool({ target: 'references' }), (error: unknown) => {
        assert.equal(httpFailure(error).status, 401);
        return true;
      });

      on.proxy.release();
      const result = await inFlight;
      assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      const names = (result.structuredContent!.data as { items: Array<{ name: string }> }).items.map(
        (i) => i.name,
      );
      assert.ok(names.includes(dagu.seed.dags.twoSteps));
      const record = on.gateway
        .auditLines()
        .find((line) => line.event === 'mcp.tool_call' && line.identity === 'old' && line.target === 'dags');
      assert.equal(record?.outcome, 'ok');
    } finally {
      on.proxy.release();
      await modern.close();
      await legacy.close().catch(() => {});
    }
    assert.ok((await reloads('ok')) > okBefore);
  });

  test('a broken edit keeps the keys loaded before, and the next good edit applies', async () => {
    const errorsBefore = await reloads('error');
    replaceFile(keysFile, 'keys:\n  - name: [unclosed\n');
    const deadline = Date.now() + 5000;
    while ((await reloads('error')) === errorsBefore) {
      assert.ok(Date.now() < deadline, 'the broken file was not noticed within 5 s');
      await sleep(25);
    }
    assert.equal(await statusWith(on.gateway.mcpUrl, NEW), 200);
    assert.equal(await statusWith(on.gateway.mcpUrl, STAY), 200);

    const LATEST = newApiKey('latest');
    replaceFile(keysFile, keysYaml([{ name: 'latest', key: LATEST }]));
    while ((await statusWith(on.gateway.mcpUrl, LATEST)) !== 200) {
      assert.ok(Date.now() < deadline + 5000, 'the repaired file was not applied within 5 s');
      await sleep(25);
    }
    assert.equal(await statusWith(on.gateway.mcpUrl, NEW), 401);
  });
});

describe('SIGHUP to a running gateway process', () => {
  let child: ChildProcess | undefined;
  let output = '';
  const base = tempDir('gateway-sighup-');
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((done) => child!.once('exit', done));
    }
    rmSync(base, { recursive: true, force: true });
  });

  test('reloads the key file (which no file watch sees), keeps serving, and stops cleanly on SIGTERM', async () => {
    // The configured path is a symlink into another folder: the gateway watches the link's folder, so an
    // in-place edit of the target is invisible to the watch and only the signal can pick it up.
    const realDir = join(base, 'real');
    const linkDir = join(base, 'link');
    mkdirSync(realDir);
    mkdirSync(linkDir);
    const FIRST = newApiKey('first');
    const SECOND = newApiKey('second');
    const realFile = join(realDir, 'keys.yaml');
    writeFileSync(realFile, keysYaml([{ name: 'first', key: FIRST }]));
    symlinkSync(realFile, join(linkDir, 'keys.yaml'));

    child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? base,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        AUDIT_LOG: join(base, 'audit.log'),
        AUTH_API_KEYS_FILE: join(linkDir, 'keys.yaml'),
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((done) => child!.once('exit', (code) => done(code)));

    const started = Date.now();
    let address: string | undefined;
    while (address === undefined) {
      assert.ok(Date.now() - started < 15_000, `the gateway did not start:\n${output}`);
      assert.equal(child.exitCode, null, `the gateway exited:\n${output}`);
      address = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1];
      if (address === undefined) await sleep(25);
    }
    const mcpUrl = `${address}/mcp`;

    assert.equal(await statusWith(mcpUrl, FIRST), 200);
    assert.equal(await statusWith(mcpUrl, SECOND), 401);

    writeFileSync(realFile, keysYaml([{ name: 'second', key: SECOND }]));
    await sleep(600); // longer than the watch debounce: had the watch seen the edit, it would apply now
    assert.equal(await statusWith(mcpUrl, SECOND), 401, 'reloaded without a signal');

    child.kill('SIGHUP');
    const deadline = Date.now() + 5000;
    while ((await statusWith(mcpUrl, SECOND)) !== 200) {
      assert.ok(Date.now() < deadline, `SIGHUP did not reload the keys:\n${output}`);
      await sleep(25);
    }
    assert.equal(await statusWith(mcpUrl, FIRST), 401);
    assert.equal(child.exitCode, null, 'still running after SIGHUP');
    // The log line is written asynchronously: it may reach the pipe after the first accepted call.
    const reloadLine = /"trigger":"signal"[^\n]*API keys reloaded|API keys reloaded[^\n]*"trigger":"signal"/;
    const logDeadline = Date.now() + 5000;
    while (!reloadLine.test(output)) {
      assert.ok(Date.now() < logDeadline, `no reload log line:\n${output}`);
      await sleep(25);
    }
    for (const era of ['modern', 'legacy'] as const) {
      const client = await CONNECTORS[era](mcpUrl, bearer(SECOND));
      try {
        assert.notEqual(
          (await client.callTool({ target: 'dag', name: dagu.seed.dags.twoSteps })).isError,
          true,
        );
      } finally {
        await client.close();
      }
    }

    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
    assert.ok(!output.includes(FIRST) && !output.includes(SECOND), 'no key in the process output');
  });
});
