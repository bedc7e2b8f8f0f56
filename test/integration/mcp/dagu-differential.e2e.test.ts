// Dagu's own `dagu_read` as a second opinion (issue 12 item 5): the same reads of the same seeded Dagu 2.x
// through the gateway and through Dagu's own MCP endpoint (`/mcp`, sessions, `Mcp-Session-Id`, read with
// the v1 SDK client), compared field by field. Every difference must be a row of the table in
// docs/dagu-differences.md, which names the clause of Spec 021 that decides it; a difference not in the
// table, or a row no read shows any more, fails the test.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, seedDagu, startDagu, type TestDagu } from '../../support/dagu.ts';
import {
  type AcceptedDifference,
  compareData,
  type Difference,
  differenceKey,
  quotedClause,
  readAcceptedDifferences,
} from '../../support/data-diff.ts';
import { connectLegacy, type RunningGateway, startGateway, type TestClient } from '../../support/gateway.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TABLE = join(ROOT, 'docs', 'dagu-differences.md');
const SPEC = join(ROOT, '..', 'shared', 'spec', '021-mcp-read-tool.md');

let dagu: TestDagu;
let gateway: RunningGateway;
let ours: TestClient;
let theirs: TestClient;

/** The runner's seeded Dagu when it is a 2.x; otherwise one of this file's own (only 2.x serves `/mcp`). */
async function seededDagu2(): Promise<TestDagu> {
  const shared = await getTestDagu();
  if (shared.generation === 2) return shared;
  await shared.stop(); // a no-op for the runner's instance; ends the 1.x one this file may have started
  const own = await startDagu({ generation: 2 });
  try {
    return { ...own, seed: await seedDagu(own), shared: false };
  } catch (error) {
    await own.stop();
    throw error;
  }
}

before(async () => {
  dagu = await seededDagu2();
  gateway = await startGateway({ DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase });
  ours = await connectLegacy(gateway.mcpUrl);
  theirs = await connectLegacy(`${dagu.url}/mcp`);
});
after(async () => {
  await ours?.close();
  await theirs?.close();
  await gateway?.close();
  await dagu?.stop();
});

/** Every read both implementations serve, from the seed: DAGs, runs, logs, wiki pages and searches. */
function reads(): Array<Record<string, unknown>> {
  const { dags, runs, facts, v2 } = dagu.seed;
  assert.ok(v2 !== undefined, 'the seed of a Dagu 2.x has its 2.x part');
  const dagNames: string[] = Object.values(dags).filter((name) => typeof name === 'string');
  const run = (name: string, dagRunId: string) => ({ target: 'run', name, dagRunId });
  const pages = v2.wiki.pages;
  return [
    { target: 'references' },
    { target: 'reference' },
    { target: 'reference', name: 'read-tool' },
    { target: 'dags' },
    { target: 'dags', query: 'labels=alpha' },
    { target: 'dags', query: 'perPage=3&page=2' },
    ...dagNames.map((name) => ({ target: 'dag', name })),
    ...[dags.twoSteps, dags.broken, dags.gate].map((name) => ({ target: 'dag_spec', name })),
    { target: 'runs' },
    { target: 'runs', query: `name=${dags.twoSteps}` },
    { target: 'runs', query: 'status=2' },
    run(dags.twoSteps, runs.twoStepsFirst),
    run(dags.fails, runs.fails),
    run(dags.parent, runs.parent),
    run(dags.gate, runs.gate),
    run(dags.manyLines, runs.manyLines),
    run(dags.foreach ?? '', v2.runs.foreach),
    run(dags.humanTask ?? '', v2.runs.humanTask),
    { target: 'run_logs', name: dags.fails, dagRunId: runs.fails },
    { target: 'run_logs', name: dags.twoSteps, dagRunId: runs.twoStepsFirst, query: 'tail=100' },
    { target: 'step_log', name: dags.fails, dagRunId: runs.fails, stepName: facts.failsStepName },
    {
      target: 'step_log',
      name: dags.twoSteps,
      dagRunId: runs.twoStepsFirst,
      stepName: facts.twoStepsStepNames[0],
    },
    { target: 'step_log', name: dags.manyLines, dagRunId: runs.manyLines, stepName: 'count' },
    { target: 'wiki' },
    { target: 'wiki', query: 'flat=true' },
    ...v2.wiki.workspaces.map((workspace) => ({ target: 'wiki', workspace })),
    ...pages.map((page) => ({ target: 'wiki_page', workspace: page.workspace, path: page.path })),
    { target: 'wiki_search', search: v2.wiki.commonWord },
    { target: 'wiki_search', search: v2.wiki.opsWord, workspace: 'ops' },
    // URI mode, as Dagu writes its URIs (a wiki page path escaped into one segment).
    { uri: 'dagu://reference' },
    { uri: 'dagu://dags?perPage=5' },
    { uri: `dagu://dags/${dags.twoSteps}/spec` },
    { uri: `dagu://runs?name=${dags.fails}` },
    { uri: `dagu://runs/${dags.fails}/${runs.fails}` },
    { uri: `dagu://runs/${dags.fails}/${runs.fails}/logs` },
    { uri: `dagu://runs/${dags.fails}/${runs.fails}/steps/${facts.failsStepName}/logs` },
    { uri: 'dagu://wiki/ops' },
    ...pages.map((page) => ({ uri: `dagu://wiki/${page.workspace}/${encodeURIComponent(page.path)}` })),
  ];
}

const success = (result: Awaited<ReturnType<TestClient['callTool']>>, who: string, args: unknown) => {
  assert.notEqual(
    result.isError,
    true,
    `${who}: ${JSON.stringify(args)} → ${JSON.stringify(result.structuredContent ?? result.content)}`,
  );
  return result.structuredContent as { target: string; data: unknown };
};

describe('the gateway and Dagu 2.x’s own dagu_read, on the same Dagu', () => {
  const seen = new Map<string, Difference>();
  const accepted = () => readAcceptedDifferences(TABLE);

  test('every read both serve succeeds on both, and every difference in data is an accepted one', async () => {
    const table = new Map(accepted().map((row) => [differenceKey(row), row]));
    const unexpected: string[] = [];
    for (const args of reads()) {
      const [gatewayResult, daguResult] = await Promise.all([ours.callTool(args), theirs.callTool(args)]);
      const mine = success(gatewayResult, 'gateway', args);
      const other = success(daguResult, 'Dagu /mcp', args);
      assert.equal(mine.target, other.target, JSON.stringify(args));
      for (const difference of compareData(mine.target, mine.data, other.data)) {
        seen.set(differenceKey(difference), difference);
        if (!table.has(differenceKey(difference))) {
          unexpected.push(
            `| \`${difference.target}\` | \`${difference.path}\` | \`${difference.kind}\` | gateway ${JSON.stringify(difference.gateway)?.slice(0, 80)} / Dagu ${JSON.stringify(difference.dagu)?.slice(0, 80)} (${JSON.stringify(args)})`,
          );
        }
      }
    }
    assert.deepEqual(
      unexpected,
      [],
      `differences not in docs/dagu-differences.md:\n${unexpected.join('\n')}`,
    );
  });

  test('every row of the table is still a difference some read shows (no stale rows)', () => {
    const stale = accepted().filter((row) => !seen.has(differenceKey(row)));
    assert.ok(seen.size > 0, 'the comparison ran');
    assert.deepEqual(stale.map(differenceKey), []);
  });

  test('every row names a clause of Spec 021, quoted as the contract says it', (t) => {
    const rows: AcceptedDifference[] = accepted();
    assert.ok(rows.length > 0);
    // The contract sits beside the repository (../shared); CI always has it: there a missing file fails.
    if (!existsSync(SPEC)) return t.skip(skipUnlessCI(`${SPEC} is missing`));
    const spec = readFileSync(SPEC, 'utf8').replace(/\s+/g, ' ');
    for (const row of rows) {
      const quoted = quotedClause(row.clause);
      assert.ok(quoted !== undefined, `no quoted clause: ${differenceKey(row)}`);
      assert.ok(
        spec.includes(quoted.replace(/\s+/g, ' ')),
        `not in Spec 021: "${quoted}" (${differenceKey(row)})`,
      );
    }
  });
});

test('the comparison finds what differs: a missing field on either side, a value, a timestamp format', () => {
  const differences = compareData(
    'run',
    { name: 'a', startedAt: '2026-12-02T03:30:04.000Z', steps: [{ name: 's', status: 4 }], extra: 1 },
    { name: 'a', startedAt: '2026-12-02T03:30:04Z', steps: [{ name: 's', status: 2 }], only: true },
  );
  assert.deepEqual(differences.map(differenceKey).sort(), [
    'run data.extra gateway-only',
    'run data.only dagu-only',
    'run data.startedAt format',
    'run data.steps[].status value',
  ]);
  assert.deepEqual(
    compareData('run', { items: [{ name: 'x' }, { name: 'y' }] }, { items: [{ name: 'y' }, { name: 'x' }] }),
    [],
  );
});
