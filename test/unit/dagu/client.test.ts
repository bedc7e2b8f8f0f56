import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createDaguClient,
  expandRoute,
  generationOf,
  isPathStructure,
  type UpstreamOutcome,
} from '../../../src/dagu/client.ts';
import { DaguError } from '../../../src/dagu/errors.ts';
import type { DaguClient } from '../../../src/dagu/types.ts';
import type { ReadError } from '../../../src/read/errors.ts';
import { readErrorFromDagu, upstreamError } from '../../../src/read/upstream/failure.ts';
import { FAULTS, type FaultServer, startFaultServer } from '../../support/fake-dagu-faults.ts';
import { type RecordingServer, startRecordingServer } from '../../support/recording-server.ts';

const config = (url: string, extra: { token?: string; timeoutMs?: number; apiBase?: string } = {}) => ({
  url,
  apiBase: extra.apiBase ?? '/api/v1',
  token: extra.token,
  timeoutMs: extra.timeoutMs ?? 2000,
});

/** The contract error the read service makes of the client's rejection (a DaguError). */
async function rejection(promise: Promise<unknown>): Promise<ReadError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DaguError, `expected a DaguError, got ${String(error)}`);
    return readErrorFromDagu(error);
  }
  assert.fail('expected a rejection');
}

describe('Dagu client: escaping and the path-structure rule (request-recording server)', () => {
  let server: RecordingServer;
  let client: DaguClient;
  before(async () => {
    server = await startRecordingServer();
    client = createDaguClient(config(server.url, { token: 'gateway-secret' }));
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('escapes every path value as one segment with encodeURIComponent', async () => {
    const cases: Array<[string, string]> = [
      ['a b', 'a%20b'],
      ['q?x=1', 'q%3Fx%3D1'],
      ['hash#frag', 'hash%23frag'],
      ['100%', '100%25'],
      ['50%off', '50%25off'],
      ['plus+amp&', 'plus%2Bamp%26'],
      ['déjà vu ✓', 'd%C3%A9j%C3%A0%20vu%20%E2%9C%93'],
      ['..x', '..x'],
      ['dotted.name', 'dotted.name'],
    ];
    for (const [value, escaped] of cases) {
      const before = server.requests.length;
      // A step name may hold any of these (a DAG name or run id could not: see the next test).
      await client.get({
        route: '/dag-runs/{name}/{dagRunId}/steps/{stepName}/log',
        params: { name: 'd', dagRunId: 'r', stepName: value },
      });
      assert.equal(server.requests.length, before + 1);
      assert.equal(server.requests.at(-1)?.rawUrl, `/api/v1/dag-runs/d/r/steps/${escaped}/log`);
    }
  });

  it('refuses, without a request, DAG names, run ids and step names outside Dagu’s rules', async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['/dags/{fileName}/spec', { fileName: 'a b' }, /^The DAG "a b" does not exist\.$/],
      ['/dags/{fileName}/spec', { fileName: 'x'.repeat(41) }, /^The DAG "x+" does not exist\.$/],
      [
        '/dag-runs/{name}/{dagRunId}',
        { name: 'ok', dagRunId: 'run.1' },
        /^The DAG-run "run\.1" does not exist\.$/,
      ],
      [
        '/dag-runs/{name}/{dagRunId}/sub-dag-runs/{subDAGRunId}',
        { name: 'ok', dagRunId: 'r', subDAGRunId: 'sub run' },
        /^The sub DAG-run "sub run" does not exist\.$/,
      ],
      [
        '/dag-runs/{name}/{dagRunId}/steps/{stepName}/log',
        { name: 'ok', dagRunId: 'r', stepName: 'x'.repeat(256) },
        /^The step "x+…" does not exist\.$/,
      ],
    ];
    for (const [route, params, message] of cases) {
      const before = server.requests.length;
      const error = await rejection(client.get({ route, params }));
      assert.equal(error.code, 'resource_not_found');
      assert.match(error.message, message);
      assert.equal(server.requests.length, before, `no request for ${JSON.stringify(params)}`);
    }
  });

  it('encodes query keys and values and keeps their order', async () => {
    await client.get({
      route: '/dag-runs',
      query: [
        ['status', '2'],
        ['status', '4'],
        ['name', 'a b&c=d'],
      ],
    });
    assert.equal(server.requests.at(-1)?.rawUrl, '/api/v1/dag-runs?status=2&status=4&name=a%20b%26c%3Dd');
  });

  it('sends Accept: application/json and the gateway token as a bearer credential', async () => {
    await client.get({ route: '/health' });
    const headers = server.requests.at(-1)?.headers ?? {};
    assert.equal(headers.accept, 'application/json');
    assert.equal(headers.authorization, 'Bearer gateway-secret');
  });

  it('sends no Authorization header when no token is configured', async () => {
    const anonymous = createDaguClient(config(server.url));
    try {
      await anonymous.get({ route: '/health' });
      assert.equal(server.requests.at(-1)?.headers.authorization, undefined);
    } finally {
      await anonymous.close();
    }
  });

  it('refuses values Dagu would read as path structure without making a request', async () => {
    const refused = [
      '',
      '.',
      '..',
      '../etc',
      'a/b',
      'a\\b',
      '/abs',
      'x/..',
      '\uD800',
      'ok\uDC00',
      // Dagu decodes escapes itself (twice on some routes): these would name something else.
      '%2F',
      'x%2F..%2Ftwo-steps',
      'a%5Cb',
      '%2e%2e',
      '..%2F',
      '%252F..%252Ftwo-steps',
      '%25252F',
      '%2F%zz',
      '%41',
      'two%2Dsteps',
      // Control characters: Dagu 1.30 answers a NUL in a DAG name with a 200 stub.
      'a\u0000b',
      'tab\there',
      'line\nbreak',
      'del\u007f',
    ];
    for (const value of refused) {
      assert.equal(isPathStructure(value), true, JSON.stringify(value));
      const before = server.requests.length;
      const error = await rejection(
        client.get({ route: '/dag-runs/{name}/{dagRunId}', params: { name: 'ok', dagRunId: value } }),
      );
      assert.equal(error.code, 'resource_not_found');
      assert.match(error.message, /^The DAG-run .* does not exist\.$/);
      assert.equal(server.requests.length, before, `no request for ${JSON.stringify(value)}`);
    }
  });

  it('accepts values that merely look odd (no path structure)', () => {
    for (const value of ['...', '.hidden', 'a..b', '100%', '50%off', '%zz', '😀', 'x'.repeat(10_000)]) {
      assert.equal(isPathStructure(value), false, JSON.stringify(value).slice(0, 40));
    }
    assert.equal(
      expandRoute('/dag-runs/a/b/steps/{stepName}', { stepName: '100%' }),
      '/dag-runs/a/b/steps/100%25',
    );
  });

  it('cuts long values short in the not-found message', async () => {
    const error = await rejection(
      client.get({ route: '/dags/{fileName}', params: { fileName: `${'x'.repeat(5000)}/` } }),
    );
    assert.ok(error.message.length < 120, error.message);
  });

  it('keeps a base path of DAGU_URL in front of the API base', async () => {
    const based = createDaguClient(config(`${server.url}/dagu/`, { apiBase: '/api/v2' }));
    try {
      await based.get({ route: '/dags/{fileName}', params: { fileName: 'x' } });
      assert.equal(server.requests.at(-1)?.rawUrl, '/dagu/api/v2/dags/x');
      assert.equal(based.generation, 1);
    } finally {
      await based.close();
    }
  });

  it('reuses keep-alive connections for sequential calls', async () => {
    const fresh = await startRecordingServer();
    const pooled = createDaguClient(config(fresh.url));
    try {
      for (let i = 0; i < 10; i++) await pooled.get({ route: '/health' });
      assert.equal(fresh.requests.length, 10);
      // undici's pool may alternate between two idle connections; it never opens one per call.
      assert.ok(fresh.connections() <= 2, `${fresh.connections()} connections for 10 calls`);
    } finally {
      await pooled.close();
      await fresh.close();
    }
  });

  it('reports each upstream call to the hook with its route template, status and duration', async () => {
    const seen: Array<[string, UpstreamOutcome, number]> = [];
    const hooked = createDaguClient(config(server.url), {
      onUpstream: (route, status, seconds) => seen.push([route, status, seconds]),
    });
    try {
      await hooked.get({ route: '/dags/{fileName}', params: { fileName: 'secret-name' } });
      assert.equal(seen.length, 1);
      assert.equal(seen[0]?.[0], '/dags/{fileName}');
      assert.equal(seen[0]?.[1], 200);
      assert.ok((seen[0]?.[2] ?? -1) >= 0);
    } finally {
      await hooked.close();
    }
  });

  it('ready() has nothing to wait for with an explicit base; with auto it waits for the dialect', async () => {
    assert.equal(client.ready(), undefined);
    const closed = await startRecordingServer();
    await closed.close();
    const auto = createDaguClient(config(closed.url, { apiBase: 'auto' }));
    try {
      const finding = auto.ready();
      assert.ok(finding instanceof Promise, 'no dialect known yet');
      await assert.rejects(finding, (error) => error instanceof DaguError && error.kind === 'unreachable');
    } finally {
      await auto.close();
    }
  });

  it('derives the generation from the API base', () => {
    assert.equal(generationOf('/api/v1'), 2);
    assert.equal(generationOf('/api/v2'), 1);
    assert.equal(generationOf('/dagu/api/v2'), 1);
  });
});

describe('Dagu client: faults a real Dagu cannot produce on demand (fake upstream)', () => {
  let faults: FaultServer;
  let client: DaguClient;
  before(async () => {
    faults = await startFaultServer();
    client = createDaguClient(config(faults.url, { timeoutMs: 300 }));
  });
  after(async () => {
    await client.close();
    await faults.close();
  });

  it('a hang becomes resource_unavailable "Dagu did not answer in time"', async () => {
    const started = Date.now();
    const error = await rejection(client.get({ route: `/${FAULTS.hang}` }));
    assert.equal(error.code, 'resource_unavailable');
    assert.equal(error.message, 'Dagu did not answer in time.');
    assert.ok(Date.now() - started < 2000);
  });

  it("the caller's AbortSignal ends the call too", async () => {
    const slow = createDaguClient(config(faults.url, { timeoutMs: 10_000 }));
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const error = await rejection(slow.get({ route: `/${FAULTS.hang}`, signal: controller.signal }));
      assert.equal(error.code, 'resource_unavailable');
      assert.equal(error.message, 'The read was cancelled before Dagu answered.');
      const deadline = AbortSignal.timeout(50);
      const timedOut = await rejection(slow.get({ route: `/${FAULTS.hang}`, signal: deadline }));
      assert.equal(timedOut.message, 'Dagu did not answer in time.');
    } finally {
      await slow.close();
    }
  });

  it('a connection reset becomes resource_unavailable "Dagu is unreachable"', async () => {
    const error = await rejection(client.get({ route: `/${FAULTS.reset}` }));
    assert.equal(error.code, 'resource_unavailable');
    assert.equal(error.message, 'Dagu is unreachable.');
  });

  it('a closed port becomes resource_unavailable "Dagu is unreachable"', async () => {
    const closed = await startFaultServer();
    const url = closed.url;
    await closed.close();
    const nowhere = createDaguClient(config(url));
    try {
      const error = await rejection(nowhere.get({ route: '/health' }));
      assert.equal(error.code, 'resource_unavailable');
      assert.equal(error.message, 'Dagu is unreachable.');
      assert.equal((await nowhere.probe(AbortSignal.timeout(5000))).reachable, false);
    } finally {
      await nowhere.close();
    }
  });

  it('malformed JSON and a body cut short become internal_error "malformed response"', async () => {
    for (const fault of [FAULTS.malformed, FAULTS.truncated]) {
      const error = await rejection(client.get({ route: `/${fault}` }));
      assert.equal(error.code, 'internal_error', fault);
      assert.match(error.message, /^Dagu returned a malformed response/);
    }
  });

  it('reports each failure to the hook with its real kind: timeout, network_error, aborted, bad_body, HTTP status', async () => {
    const seen: UpstreamOutcome[] = [];
    const closed = await startFaultServer();
    const closedUrl = closed.url;
    await closed.close();
    const hooked = createDaguClient(config(faults.url, { timeoutMs: 200 }), {
      onUpstream: (_route, outcome) => seen.push(outcome),
    });
    const nowhere = createDaguClient(config(closedUrl), {
      onUpstream: (_route, outcome) => seen.push(outcome),
    });
    const swallow = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        () => undefined,
      );
    try {
      await swallow(hooked.get({ route: `/${FAULTS.hang}` }));
      await swallow(hooked.get({ route: `/${FAULTS.reset}` }));
      await swallow(nowhere.get({ route: '/health' }));
      const controller = new AbortController();
      const cancelled = swallow(hooked.get({ route: `/${FAULTS.hang}`, signal: controller.signal }));
      setTimeout(() => controller.abort(), 50);
      await cancelled;
      await swallow(hooked.get({ route: `/${FAULTS.truncated}` }));
      await hooked.get({ route: `/${FAULTS.emptyServerError}` });
      assert.deepEqual(seen, ['timeout', 'network_error', 'network_error', 'aborted', 'bad_body', 500]);
    } finally {
      await hooked.close();
      await nowhere.close();
    }
  });

  it('an empty 500 resolves with no body and maps to resource_unavailable', async () => {
    const response = await client.get({ route: `/${FAULTS.emptyServerError}` });
    assert.deepEqual(response, { status: 500, body: undefined });
    const error = upstreamError(response, { mode: 'target', target: 'dag' });
    assert.equal(error.code, 'resource_unavailable');
    assert.equal(error.message, 'Dagu could not serve the read (HTTP 500).');
    assert.equal(error.upstreamStatus, 500);
  });

  it('a body of only whitespace is no body; a JSON body is parsed', async () => {
    assert.deepEqual(await client.get({ route: `/${FAULTS.blankNotFound}` }), {
      status: 404,
      body: undefined,
    });
    assert.deepEqual(await client.get({ route: `/${FAULTS.ok}` }), { status: 200, body: { ok: true } });
  });

  it('a 5xx message never carries absolute paths or stack traces', async () => {
    const response = await client.get({ route: `/${FAULTS.unavailable}` });
    assert.equal(response.status, 503);
    const error = upstreamError(response, { mode: 'target' });
    assert.equal(error.code, 'resource_unavailable');
    assert.doesNotMatch(error.message, /\/var\/lib|goroutine|main\.go/);
    assert.match(error.message, /error reading <path>/);
  });

  it('the readiness probe: reachable for a healthy answer, not for faults', async () => {
    assert.equal((await client.probe(AbortSignal.timeout(5000))).reachable, true);
    const hanging = createDaguClient({
      ...config(faults.url, { timeoutMs: 100 }),
      apiBase: `/${FAULTS.hang}`,
    });
    try {
      assert.equal((await hanging.probe(AbortSignal.timeout(5000))).reachable, false);
    } finally {
      await hanging.close();
    }
  });
});
