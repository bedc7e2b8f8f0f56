// Installs the tools CI runs beside the gateway (scripts/test-tools/package.json: the MCP conformance
// suite, MCP Inspector (and its v1-line web UI), official Node 22 and 24 binaries from the npm registry) into a cache folder
// keyed by their lockfile, once; later runs reuse it. Idempotent; a failed install fails the run
// (never a skip).
//
//   node scripts/test-tools.mjs        prints the cache folder
//   import { testTools } from './test-tools.mjs'

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'test-tools');
const CACHE = process.env.DAGU_MCP_GATEWAY_CACHE ?? join(homedir(), '.cache', 'dagu-mcp-gateway');

/** The cache folder for the current lockfile, installing it first when it is not complete. */
export function testTools() {
  const lock = readFileSync(join(SOURCE, 'package-lock.json'));
  const key = createHash('sha256').update(lock).digest('hex').slice(0, 12);
  const folder = join(CACHE, `test-tools-${key}`);
  const done = join(folder, '.installed');
  if (!existsSync(done)) {
    // Install next to the final folder and rename: an interrupted install never looks complete.
    const staging = `${folder}.partial-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(SOURCE, file), join(staging, file));
    console.error(`test-tools: installing ${SOURCE} into ${folder} (once)`);
    // The suite declares node >=22; npm itself may run on 20, which is fine for installing.
    const result = spawnSync(
      'npm',
      ['ci', '--no-audit', '--no-fund', '--engine-strict=false', '--ignore-scripts'],
      { cwd: staging, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (result.status !== 0) {
      rmSync(staging, { recursive: true, force: true });
      throw new Error(`test-tools: npm ci failed (status ${result.status ?? result.signal})`);
    }
    writeFileSync(join(staging, '.installed'), `${new Date().toISOString()}\n`);
    rmSync(folder, { recursive: true, force: true });
    renameSync(staging, folder);
  }
  const modules = join(folder, 'node_modules');
  return {
    folder,
    node22: join(modules, 'node22', 'bin', 'node'),
    node24: join(modules, 'node24', 'bin', 'node'),
    conformance: join(modules, '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
    // MCP Inspector's launcher (`--cli` for the headless CLI); it declares node >=22.19: run it with node22.
    inspector: join(
      modules,
      '@modelcontextprotocol',
      'inspector',
      'clients',
      'launcher',
      'build',
      'index.js',
    ),
    // MCP Inspector's v1-line web UI (static files): its "Direct" connection type connects from the
    // browser itself, which the v2 web UI (always through its own backend) cannot.
    inspectorWebV1: join(modules, 'inspector-web-v1', 'dist'),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(testTools().folder);
