/**
 * Seeded property-based fuzz of the input layer, through the read service as the MCP adapters call
 * it (`read` for tools/call, `readUri` for resources/read): whatever a caller sends, the answer is a
 * success envelope or the contract's error object (known code, `field` naming a real or supplied
 * field), never a throw, an internal error or anything else. The real Dagu client talks to a local
 * server that answers 404 to everything (the input layer is under test, not Dagu; test/fuzz/http.test.ts
 * fuzzes a real one), and no request it receives may carry path structure in a path value: every
 * segment, decoded once (and twice, as Dagu 1.x does), is a plain name.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../../src/config.ts';
import { createDaguClient } from '../../src/dagu/client.ts';
import type { DaguClient } from '../../src/dagu/types.ts';
import { createReadService, type ReadOutcome } from '../../src/read/service.ts';
import { TARGET_HANDLERS } from '../../src/read/targets/index.ts';
import { workbookErrors } from '../../src/workbook/errors.ts';
import type { WorkbookReader } from '../../src/workbook/index.ts';
import { assertContractError, daguUri, FUZZ_SEED, fuzzRuns, readArguments } from '../support/fuzz.ts';
import { OPEN } from '../support/read-deps.ts';

const API_BASE = { 1: '/api/v2', 2: '/api/v1' } as const;
const rawUrls: string[] = [];
const notFound = createServer((request, response) => {
  rawUrls.push(request.url ?? '');
  response
    .writeHead(404, { 'content-type': 'application/json' })
    .end('{"code":"not_found","message":"not found"}');
});
let daguUrl: string;
const clients: DaguClient[] = [];
before(async () => {
  await new Promise<void>((resolve) => notFound.listen(0, '127.0.0.1', resolve));
  daguUrl = `http://127.0.0.1:${(notFound.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  notFound.close();
});

function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Every path segment after the API base is one plain name, once decoded and twice. */
function assertPlainPath(rawUrl: string, apiBase: string): void {
  const path = rawUrl.split('?')[0]!;
  assert.ok(path.startsWith(`${apiBase}/`), `path ${path} outside ${apiBase}`);
  for (const segment of path.slice(apiBase.length + 1).split('/')) {
    for (const decoded of [decodeOrKeep(segment), decodeOrKeep(decodeOrKeep(segment))]) {
      assert.ok(decoded !== '' && decoded !== '.' && decoded !== '..', `segment ${segment} in ${rawUrl}`);
      assert.ok(!/[/\\]/.test(decoded), `segment ${segment} in ${rawUrl} decodes to path structure`);
    }
  }
}

/** No workbook exists: the fuzz must not read this machine's files. */
const NO_FILES: WorkbookReader = {
  read: (path) => Promise.reject(workbookErrors.notFound(String(path).split(/[\\/]/).at(-1) ?? '')),
  load: { running: 0, queued: 0, idle: 0, size: 0 },
  hashRates: { SHA1: 1, SHA256: 1, SHA384: 1, SHA512: 1 },
  close: () => Promise.resolve(),
};

/** 10,000 inputs on Dagu 2.x (the system under test), a quarter of that on the 1.x dialect. */
const RUNS = { 2: { read: 8000, readUri: 2000 }, 1: { read: 2000, readUri: 500 } } as const;

for (const generation of [2, 1] as const) {
  let service: ReturnType<typeof createReadService>;
  before(() => {
    const config = loadConfig({ DAGU_URL: daguUrl, DAGU_API_BASE: API_BASE[generation] }).dagu;
    const dagu = createDaguClient(config);
    clients.push(dagu);
    service = createReadService({ dagu, workbook: NO_FILES }, TARGET_HANDLERS);
  });

  const check = (outcome: ReadOutcome, raw: unknown) => {
    if (outcome.ok) {
      assert.equal(typeof outcome.envelope.target, 'string');
      assert.ok(outcome.envelope.data !== null && typeof outcome.envelope.data === 'object');
    } else {
      const keys = raw !== null && typeof raw === 'object' ? Reflect.ownKeys(raw).map(String) : [];
      assertContractError(outcome.error, keys);
    }
    for (const rawUrl of rawUrls.splice(0)) assertPlainPath(rawUrl, API_BASE[generation]);
  };

  test(`Dagu ${generation}.x dialect: dagu_read arguments get a success or the contract's error`, async () => {
    const started = performance.now();
    const runs = fuzzRuns(RUNS[generation].read);
    const counts: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(readArguments, async (raw) => {
        const outcome = await service.read(raw, OPEN);
        const key = outcome.ok ? 'success' : outcome.error.code;
        counts[key] = (counts[key] ?? 0) + 1;
        check(outcome, raw);
      }),
      { seed: FUZZ_SEED, numRuns: runs },
    );
    console.log(
      `fuzz read (${generation}.x): ${runs} inputs, seed ${FUZZ_SEED}, ${Math.round(performance.now() - started)} ms, ${JSON.stringify(counts)}`,
    );
  });

  test(`Dagu ${generation}.x dialect: resources/read URIs get a success or the contract's error`, async () => {
    const started = performance.now();
    const runs = fuzzRuns(RUNS[generation].readUri);
    await fc.assert(
      fc.asyncProperty(daguUri, async (uri) => check(await service.readUri(uri, OPEN), { uri })),
      { seed: FUZZ_SEED, numRuns: runs },
    );
    console.log(
      `fuzz readUri (${generation}.x): ${runs} URIs, seed ${FUZZ_SEED}, ${Math.round(performance.now() - started)} ms`,
    );
  });
}
