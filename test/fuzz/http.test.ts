/**
 * Seeded fuzz over HTTP: the real gateway in front of the real test Dagu, raw POSTs as any client
 * could send them (tools/call and resources/read with fuzzed arguments in both protocol eras, plus
 * arbitrary JSON-RPC bodies, broken JSON and odd headers). Every answer has a status below 500, and no
 * body carries a stack trace, a source location or an absolute path of this machine; a tool error is
 * the contract's error object.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { getTestDagu, type TestDagu } from '../support/dagu.ts';
import {
  assertContractError,
  assertNoLeak,
  daguUri,
  edgeString,
  FUZZ_SEED,
  fuzzRuns,
  readArguments,
} from '../support/fuzz.ts';
import { type RunningGateway, startGateway } from '../support/gateway.ts';

let dagu: TestDagu;
let gateway: RunningGateway;

before(async () => {
  dagu = await getTestDagu();
  gateway = await startGateway({
    DAGU_URL: dagu.url,
    DAGU_API_BASE: dagu.apiBase,
    // The fuzz is one caller sending as fast as it can; the limits are tested elsewhere.
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
});
after(async () => {
  await gateway?.close();
  await dagu?.stop();
});

const ERAS = {
  legacy: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
  modern: { accept: 'application/json', 'mcp-protocol-version': '2026-07-28' },
} as const;
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface FuzzRequest {
  headers: Record<string, string>;
  body: string;
  /** The tool arguments, when the body is a well-formed tools/call. */
  toolArguments?: unknown;
}

const era = fc.constantFrom('legacy', 'modern') as fc.Arbitrary<keyof typeof ERAS>;

const rpc = (method: string, params: unknown, modern: boolean) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: modern && params !== null && typeof params === 'object' ? { ...params, _meta: ENVELOPE } : params,
  });

const toolCall: fc.Arbitrary<FuzzRequest> = fc.tuple(era, readArguments).map(([name, args]) => ({
  headers: {
    'content-type': 'application/json',
    ...ERAS[name],
    ...(name === 'modern' ? { 'mcp-method': 'tools/call', 'mcp-name': 'dagu_read' } : {}),
  },
  body: rpc('tools/call', { name: 'dagu_read', arguments: args }, name === 'modern'),
  toolArguments: args,
}));

const resourceRead: fc.Arbitrary<FuzzRequest> = fc.tuple(era, daguUri).map(([name, uri]) => ({
  headers: {
    'content-type': 'application/json',
    ...ERAS[name],
    ...(name === 'modern' ? { 'mcp-method': 'resources/read' } : {}),
    // A header value carries printable ASCII only; the body carries the URI as generated.
    ...(name === 'modern' && /^[\x20-\x7e]*$/.test(uri) ? { 'mcp-name': uri } : {}),
  },
  body: rpc('resources/read', { uri }, name === 'modern'),
}));

const METHODS = ['tools/call', 'resources/read', 'tools/list', 'initialize', 'server/discover', 'ping', 'x'];

/** Anything else: odd methods and params, broken JSON, batches, wrong types and versions in headers. */
const oddRequest: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    era,
    fc.oneof(fc.constantFrom(...METHODS), edgeString),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom('json', 'truncated', 'batch', 'text'),
    fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', ''),
    fc.option(fc.constantFrom('2024-11-05', '2025-06-18', '2099-01-01', 'x'), { nil: undefined }),
  )
  .map(([name, method, params, shape, contentType, version]) => {
    const one = rpc(method, params, name === 'modern');
    const body =
      shape === 'truncated'
        ? one.slice(0, Math.max(1, Math.floor(one.length / 2)))
        : shape === 'batch'
          ? `[${one},${one}]`
          : shape === 'text'
            ? String(params)
            : one;
    const headers: Record<string, string> = { ...ERAS[name] };
    if (contentType !== '') headers['content-type'] = contentType;
    if (version !== undefined) headers['mcp-protocol-version'] = version;
    return { headers, body };
  });

const anyRequest = fc.oneof(
  { weight: 5, arbitrary: toolCall },
  { weight: 2, arbitrary: resourceRead },
  { weight: 2, arbitrary: oddRequest },
);

test('fuzzed HTTP requests: no 5xx, no stack traces or absolute paths, tool errors in the contract shape', async () => {
  const started = performance.now();
  const runs = fuzzRuns(250);
  const statuses: Record<number, number> = {};
  await fc.assert(
    fc.asyncProperty(anyRequest, async (request) => {
      const response = await fetch(gateway.mcpUrl, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
      });
      const text = await response.text();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      assert.ok(response.status < 500, `HTTP ${response.status}: ${text.slice(0, 300)}`);
      assertNoLeak(text, { paths: dagu.home === '' ? [] : [dagu.home] });
      if (request.toolArguments === undefined || response.status !== 200) return;
      const result = (JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: unknown } })
        .result;
      if (result?.isError === true) {
        const args = request.toolArguments;
        const keys = args !== null && typeof args === 'object' ? Object.keys(args) : [];
        assertContractError(result.structuredContent, keys);
      }
    }),
    { seed: FUZZ_SEED, numRuns: runs },
  );
  console.log(
    `fuzz http: ${runs} requests, seed ${FUZZ_SEED}, ${Math.round(performance.now() - started)} ms, statuses ${JSON.stringify(statuses)}`,
  );
});
