// What the gateway writes down: no secret (API keys, JWTs, the JWT secret, its Dagu token, a workbook
// password, search text) in the audit file, the application log (pino, captured at `trace`) or /metrics,
// while the audit lines do carry identity, target, outcome and the has_* flags; and the Prometheus
// families, whose numbers move with the calls made and whose labels stay bounded.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  bearer,
  type CapturedGateway,
  claims,
  hs256,
  httpFailure,
  metricSum,
  newApiKey,
  newSecret,
  postMcp,
  type Sample,
  scrape,
  startCapturedGateway,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { CONNECTORS } from '../../support/gateway.ts';
import { gatewayOnDagu } from '../../support/gateway-on-dagu.ts';

let dagu: TestDagu;
before(async () => {
  dagu = await getTestDagu();
});
after(() => dagu?.stop());

const unique = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('secrets never reach the audit log, the application log or /metrics', () => {
  const JWT_SECRET = newSecret();
  const DAGU_TOKEN = unique('dagu-token');
  const KEY = newApiKey('secretuser');
  const UNKNOWN_KEY = newApiKey('unknown');
  const QUERY_KEY = newApiKey('querykey');
  const PASSWORD = unique('workbook-password');
  const SEARCH = unique('search-text');
  const WORKBOOK = '/nonexistent/finance/q3-budget.xlsx';
  const JWT = hs256(claims('jwt-user', { username: 'Ada', role: 'operator' }), JWT_SECRET);
  const EXPIRED = hs256(claims('jwt-user', { iat: 1_000, exp: 2_000 }), JWT_SECRET);
  let gateway: CapturedGateway;

  before(async () => {
    gateway = await startCapturedGateway(
      {
        DAGU_URL: dagu.url,
        DAGU_API_BASE: dagu.apiBase,
        // The shared Dagu runs without auth and ignores it; the gateway still sends it on every call.
        DAGU_API_TOKEN: DAGU_TOKEN,
        // A root, so the workbook read (and its password) goes as far as looking for the file.
        WORKBOOK_ROOTS: '/nonexistent/finance',
        AUTH_API_KEYS_FILE: writeKeysFile([
          { name: 'secret-user', key: KEY },
          { name: 'query-user', key: QUERY_KEY },
        ]),
        AUTH_JWT_SECRET: JWT_SECRET,
      },
      { logLevel: 'trace' },
    );
  });
  after(() => gateway?.close());

  function assertNowhere(secrets: Record<string, string>, metricsText: string): void {
    const places = {
      'audit log': gateway.auditText(),
      'application log': gateway.logText(),
      '/metrics': metricsText,
    };
    for (const [where, text] of Object.entries(places)) {
      for (const [what, secret] of Object.entries(secrets)) {
        assert.ok(!text.includes(secret), `${what} appears in the ${where}`);
      }
    }
  }

  test('calls carrying keys, JWTs, a workbook password and search text leave only safe traces', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const keyClient = await CONNECTORS[era](gateway.mcpUrl, bearer(KEY));
      try {
        const workbook = await keyClient.callTool({ target: 'workbook', path: WORKBOOK, password: PASSWORD });
        assert.equal(workbook.isError, true, 'no such workbook');
        assert.ok(!JSON.stringify(workbook).includes(PASSWORD), 'the password is not echoed to the caller');
        await keyClient.callTool({ target: 'dag_search', search: SEARCH });
        await keyClient.callTool({ target: 'wiki_search', search: SEARCH });
        // A password where none is allowed is an input error; its message must not quote the value.
        const misplaced = await keyClient.callTool({ target: 'dags', password: PASSWORD });
        assert.equal(misplaced.structuredContent?.code, 'invalid_tool_input');
        assert.ok(!JSON.stringify(misplaced).includes(PASSWORD));
      } finally {
        await keyClient.close();
      }
      const jwtClient = await CONNECTORS[era](gateway.mcpUrl, bearer(JWT));
      try {
        assert.notEqual((await jwtClient.callTool({ target: 'dags' })).isError, true);
      } finally {
        await jwtClient.close();
      }
      for (const token of [UNKNOWN_KEY, EXPIRED]) {
        await assert.rejects(CONNECTORS[era](gateway.mcpUrl, bearer(token)), (error: unknown) => {
          assert.equal(httpFailure(error).status, 401);
          return true;
        });
      }
    }

    const { text: metricsText } = await scrape(gateway.baseUrl);
    assert.match(gateway.logText(), /incoming request/, 'the application log was captured');
    assertNowhere(
      {
        'the API key': KEY,
        'the unknown API key': UNKNOWN_KEY,
        'the JWT': JWT,
        "the JWT's signature": JWT.split('.')[2]!,
        'the expired JWT': EXPIRED,
        'the JWT secret': JWT_SECRET,
        "the gateway's Dagu token": DAGU_TOKEN,
        'the workbook password': PASSWORD,
        'the search text': SEARCH,
      },
      metricsText,
    );

    const lines = gateway.auditLines();
    const workbook = lines.filter((line) => line.target === 'workbook');
    assert.equal(workbook.length, 2);
    for (const line of workbook) {
      assert.equal(line.event, 'mcp.tool_call');
      assert.equal(line.identity, 'secret-user');
      assert.equal(line.identity_kind, 'api_key');
      assert.equal(typeof line.role, 'string');
      assert.equal(typeof line.client_name, 'string', 'legacy and modern calls both name their client');
      assert.equal(line.workbook_path, WORKBOOK);
      assert.equal(line.has_password, true);
      assert.equal(typeof line.outcome, 'string');
      assert.equal(typeof line.request_id, 'string');
      assert.equal(typeof line.duration_ms, 'number');
      assert.equal(typeof line.time, 'string');
    }
    const searches = lines.filter((line) => line.target === 'dag_search' || line.target === 'wiki_search');
    assert.equal(searches.length, 4);
    assert.ok(searches.every((line) => line.has_search === true && line.identity === 'secret-user'));
    const misplaced = lines.filter((line) => line.target === 'dags' && line.identity === 'secret-user');
    assert.ok(misplaced.every((line) => line.has_password === true && line.outcome === 'invalid_tool_input'));
    const jwtLines = lines.filter((line) => line.identity === 'jwt-user');
    assert.deepEqual(
      jwtLines.map((line) => [line.identity_kind, line.target, line.outcome]),
      [
        ['jwt', 'dags', 'ok'],
        ['jwt', 'dags', 'ok'],
      ],
    );
    const denied = lines.filter((line) => line.event === 'mcp.request_denied').map((line) => line.reason);
    assert.deepEqual(denied, ['unknown_key', 'expired', 'unknown_key', 'expired']);
  });

  test('a credential sent in the query string is refused and written nowhere', async () => {
    const before = gateway.logText().length;
    const response = await postMcp(`${gateway.mcpUrl}?access_token=${QUERY_KEY}&api_key=${QUERY_KEY}`);
    assert.equal(response.status, 401);
    // The request is logged, by its path alone.
    assert.match(gateway.logText().slice(before), /"url":"\/mcp"/);
    const record = gateway.auditLines().at(-1)!;
    assert.equal(record.path, '/mcp');
    assert.equal(record.reason, 'missing_credentials');
    const { text: metricsText } = await scrape(gateway.baseUrl);
    assertNowhere({ 'the API key sent in the query string': QUERY_KEY }, metricsText);
  });
});

describe('/metrics: the families, and numbers that move with the calls', () => {
  const KEY = newApiKey('metrics');
  const BURST_KEY = newApiKey('burst');
  const SLOW_KEY = newApiKey('slow');
  const on = gatewayOnDagu(() => ({
    dagu,
    env: {
      RATE_LIMIT_PER_MINUTE: '6',
      AUTH_API_KEYS_FILE: writeKeysFile([
        { name: 'metrics', key: KEY },
        { name: 'burst', key: BURST_KEY },
        { name: 'slow', key: SLOW_KEY },
      ]),
    },
  }));

  const delta = (before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}) =>
    metricSum(after, name, labels) - metricSum(before, name, labels);

  test('every family is exposed with its type', async () => {
    const { text } = await scrape(on.gateway.baseUrl);
    for (const [family, type] of [
      ['mcp_server_operation_duration_seconds', 'histogram'],
      ['dagu_upstream_request_duration_seconds', 'histogram'],
      ['mcp_gateway_auth_failures_total', 'counter'],
      ['mcp_gateway_rate_limited_total', 'counter'],
      ['mcp_gateway_inflight_calls', 'gauge'],
      ['mcp_gateway_audit_write_failures_total', 'counter'],
      ['mcp_gateway_api_keys_reloads_total', 'counter'],
      ['mcp_gateway_served_messages_total', 'counter'],
      ['process_cpu_user_seconds_total', 'counter'],
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${family} ${type}$`, 'm'), family);
    }
  });

  test('tool calls, upstream requests, auth failures and rate limiting are counted', async () => {
    const { samples: before } = await scrape(on.gateway.baseUrl);
    const name = dagu.seed.dags.fails;
    const id = dagu.seed.runs.fails;
    const modern = await CONNECTORS.modern(on.gateway.mcpUrl, bearer(KEY));
    try {
      await modern.callTool({ target: 'dags' });
      await modern.callTool({ target: 'dag_spec', name: dagu.seed.dags.twoSteps });
      await modern.callTool({ target: 'run', name, dagRunId: id });
      const missing = await modern.callTool({ target: 'dag_spec', name: 'no-such-dag' });
      assert.equal(missing.structuredContent?.code, 'resource_not_found');
    } finally {
      await modern.close();
    }
    const legacy = await CONNECTORS.legacy(on.gateway.mcpUrl, bearer(KEY));
    try {
      await legacy.callTool({ target: 'run_logs', name, dagRunId: id });
    } finally {
      await legacy.close();
    }
    for (const header of [{}, bearer(newApiKey('nobody')), bearer(newApiKey('nobody'))]) {
      assert.equal((await postMcp(on.gateway.mcpUrl, header)).status, 401);
    }
    const statuses: number[] = [];
    for (let call = 0; call < 7; call++)
      statuses.push((await postMcp(on.gateway.mcpUrl, bearer(BURST_KEY))).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429]);

    const { samples: after } = await scrape(on.gateway.baseUrl);
    const operations = 'mcp_server_operation_duration_seconds_count';
    const tools = { mcp_method_name: 'tools/call', gen_ai_tool_name: 'dagu_read' };
    assert.equal(delta(before, after, operations, tools), 5 + 6);
    assert.equal(delta(before, after, operations, { ...tools, dagu_read_target: 'dags' }), 1);
    assert.equal(delta(before, after, operations, { ...tools, dagu_read_target: 'run_logs' }), 1);
    assert.equal(
      delta(before, after, operations, {
        ...tools,
        dagu_read_target: 'dag_spec',
        error_type: 'resource_not_found',
      }),
      1,
    );
    assert.equal(delta(before, after, operations, { ...tools, mcp_protocol_version: '2026-07-28' }), 4);
    assert.ok(delta(before, after, 'mcp_server_operation_duration_seconds_sum', tools) > 0);

    const upstream = 'dagu_upstream_request_duration_seconds_count';
    assert.ok(delta(before, after, upstream) >= 5, 'at least one Dagu request per Dagu read');
    assert.ok(delta(before, after, upstream, { route: '/dags', status: '200' }) >= 1);
    // Dagu 1.30 answers the spec of a missing DAG with HTTP 500 (the gateway then reads it as not found).
    const spec = { route: '/dags/{fileName}/spec' };
    assert.ok(delta(before, after, upstream, { ...spec, status: '200' }) >= 1);
    assert.ok(
      delta(before, after, upstream, spec) > delta(before, after, upstream, { ...spec, status: '200' }),
      'the missing DAG is counted under its non-200 status',
    );
    assert.ok(delta(before, after, 'dagu_upstream_request_duration_seconds_sum') > 0);

    assert.equal(
      delta(before, after, 'mcp_gateway_auth_failures_total', { reason: 'missing_credentials' }),
      1,
    );
    assert.equal(delta(before, after, 'mcp_gateway_auth_failures_total', { reason: 'unknown_key' }), 2);
    assert.equal(delta(before, after, 'mcp_gateway_rate_limited_total', { reason: 'rate' }), 1);
    assert.equal(delta(before, after, 'mcp_gateway_audit_write_failures_total'), 0);
  });

  test('the in-flight gauge counts a call while it waits for Dagu', async () => {
    const inflight = async () =>
      metricSum((await scrape(on.gateway.baseUrl)).samples, 'mcp_gateway_inflight_calls');
    assert.equal(await inflight(), 0);
    const client = await CONNECTORS.modern(on.gateway.mcpUrl, bearer(SLOW_KEY));
    try {
      on.proxy.hold();
      const pending = client.callTool({ target: 'dags' });
      await on.proxy.held(1);
      assert.equal(await inflight(), 1);
      on.proxy.release();
      assert.notEqual((await pending).isError, true);
    } finally {
      on.proxy.release();
      await client.close();
    }
    assert.equal(await inflight(), 0);
  });

  test('label values are bounded: no DAG name, run id, step name or key appears in them', async () => {
    const { samples } = await scrape(on.gateway.baseUrl);
    const forbidden = [
      ...Object.values(dagu.seed.dags),
      ...Object.values(dagu.seed.runs),
      ...dagu.seed.facts.twoStepsStepNames,
      dagu.seed.facts.failsStepName,
      'no-such-dag',
      KEY,
      BURST_KEY,
      SLOW_KEY,
    ];
    const values = new Set(samples.flatMap((sample) => Object.values(sample.labels)));
    for (const value of values) {
      for (const word of forbidden)
        assert.ok(!value.includes(word), `label value ${JSON.stringify(value)} holds ${word}`);
    }
    const routes = new Set(
      samples
        .filter((sample) => sample.name.startsWith('dagu_upstream_'))
        .map((sample) => sample.labels.route),
    );
    assert.ok(routes.has('/dags'));
    assert.ok(
      [...routes].some((route) => route?.includes('{')),
      `route templates, not paths: ${[...routes].join(' ')}`,
    );
  });

  test('a failing audit sink is counted and reported on /readyz', async () => {
    // Every write to /dev/full fails with ENOSPC.
    const full = await startCapturedGateway({
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUDIT_LOG: '/dev/full',
      AUTH_API_KEYS_FILE: writeKeysFile([{ name: 'metrics', key: KEY }]),
    });
    try {
      const failures = async () =>
        metricSum((await scrape(full.baseUrl)).samples, 'mcp_gateway_audit_write_failures_total');
      assert.equal(await failures(), 0);
      const client = await CONNECTORS.modern(full.mcpUrl, bearer(KEY));
      try {
        assert.notEqual(
          (await client.callTool({ target: 'references' })).isError,
          true,
          'the call is still served',
        );
      } finally {
        await client.close();
      }
      assert.equal(await failures(), 1);
      assert.equal((await postMcp(full.mcpUrl)).status, 401);
      assert.equal(await failures(), 2, 'denied requests are audited too');
      const ready = await fetch(`${full.baseUrl}/readyz`);
      assert.equal(ready.status, 503);
      const body = (await ready.json()) as { checks: Array<{ name: string; ok: boolean; detail?: string }> };
      const audit = body.checks.find((check) => check.name === 'audit_log');
      assert.equal(audit?.ok, false);
      assert.match(String(audit?.detail), /ENOSPC/);
    } finally {
      await full.close();
    }
  });
});
