// `npm run test:node-matrix`: the unit tests and one integration file (against the real Dagu) on
// Node 22 and Node 24, so that "runs on Node 22+" is tested, not hoped. The binaries are the official
// builds from the npm registry (scripts/test-tools, cached); `npm test` covers the Node running npm.
import { spawnSync } from 'node:child_process';
import { testTools } from './test-tools.mjs';

const SUITES = ['unit', 'integration/mcp/dagu-read.e2e.test.ts'];
const tools = testTools();
const results = [];
for (const [label, node] of [
  ['22', tools.node22],
  ['24', tools.node24],
]) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n=== Node ${version}: ${SUITES.join(', ')} ===`);
  const run = spawnSync(node, ['scripts/run-tests.mjs', ...SUITES], { stdio: 'inherit' });
  results.push({ label, version, status: run.status ?? 1 });
}
console.log('\n=== Node matrix ===');
for (const { version, status } of results) console.log(`${status === 0 ? 'pass' : 'FAIL'}  Node ${version}`);
process.exit(results.every((result) => result.status === 0) ? 0 : 1);
