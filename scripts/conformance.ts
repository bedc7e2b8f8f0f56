// The official MCP conformance suite against the gateway (`npm run test:conformance`).
//
// Starts the pinned real Dagu and seeds it (test/support/dagu.ts), starts the gateway as users start
// it (`npm start`: src/main.ts, configured by environment only, anonymous on loopback), and runs
// `conformance server --url http://localhost:PORT/mcp` with test/conformance/baseline.yml. The suite
// needs Node 22+, so it runs on the Node 22 binary of scripts/test-tools (the gateway stays on the
// Node running this script). Exit status: the suite's (0 only when every scenario outside the
// baseline passes and every baselined one still fails).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedDagu, startDagu } from '../test/support/dagu.ts';
import { testTools } from './test-tools.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE = join(ROOT, 'test', 'conformance', 'baseline.yml');

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function waitForHealth(url: string, gateway: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (gateway.exitCode !== null)
      throw new Error(`the gateway exited during start-up (${gateway.exitCode})`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('the gateway did not answer /healthz within 30 s');
    await new Promise((done) => setTimeout(done, 100));
  }
}

const tools = testTools() as { node22: string; conformance: string };
const dagu = await startDagu();
let gateway: ChildProcess | undefined;
const results = mkdtempSync(join(tmpdir(), 'conformance-'));
let status = 1;
try {
  await seedDagu(dagu);
  const port = await freePort();
  gateway = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOST: '127.0.0.1',
      PORT: String(port),
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUDIT_LOG: join(results, 'audit.log'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitForHealth(`http://127.0.0.1:${port}/healthz`, gateway);
  const suite = spawn(
    tools.node22,
    [
      tools.conformance,
      'server',
      '--url',
      `http://localhost:${port}/mcp`,
      '--expected-failures',
      BASELINE,
      '--output-dir',
      results,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  status = await new Promise<number>((done) => suite.on('exit', (code) => done(code ?? 1)));
} finally {
  gateway?.kill('SIGTERM');
  await dagu.stop();
  rmSync(results, { recursive: true, force: true });
}
process.exit(status);
