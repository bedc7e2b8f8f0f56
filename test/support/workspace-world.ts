/**
 * A Dagu 2.x world of several workspaces, for the workspace-narrowing tests: DAGs labelled
 * `workspace=finance`, `ops` and `data`, an unlabelled one (`default`), one whose label is ambiguous
 * (no narrowed caller may see it), a parent in `ops` that calls a child in `finance`, a foreach DAG,
 * and wiki pages in each workspace but `data` (which completion must offer all the same). Every DAG name, run id, log line and page carries a token, with
 * the workspaces whose readers may legitimately see it, so that a test can look for leaks in any text.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DaguInstance, daguApi, startDagu, startRun, waitForRun } from './dagu.ts';

export const WORKSPACES = ['finance', 'ops', 'data'] as const;

/** A DAG of the world: its workspace (`default` for none, `invalid` for the ambiguous label). */
export interface WorldDag {
  name: string;
  workspace: string;
  labels: string[];
  /** Its steps (a run's steps, for step_log); empty for a DAG that cannot run. */
  steps: string[];
  spec: string;
}

const echo = (step: string, marker: string) => `  - name: ${step}\n    command: echo "${marker}"\n`;
const labelled = (labels: string[], steps: string) =>
  `${labels.length > 0 ? `labels: [${labels.join(', ')}]\n` : ''}steps:\n${steps}`;

function dag(name: string, workspace: string, labels: string[], steps: string[], body: string): WorldDag {
  return { name, workspace, labels, steps, spec: labelled(labels, body) };
}

export const DAGS: readonly WorldDag[] = [
  dag('fin-ledger', 'finance', ['workspace=finance'], ['tally'], echo('tally', 'mark-fin-ledger')),
  dag(
    'fin-child',
    'finance',
    ['workspace=finance', 'team=books'],
    ['inner'],
    echo('inner', 'mark-fin-child'),
  ),
  dag(
    'fin-each',
    'finance',
    ['workspace=finance'],
    ['each'],
    `  - name: each\n    foreach:\n      items: [q1, q2]\n      as: quarter\n      steps:\n        - name: post\n          command: echo "mark-fin-each-\${foreach.quarter}"\n`,
  ),
  dag('ops-restart', 'ops', ['workspace=ops'], ['restart'], echo('restart', 'mark-ops-restart')),
  dag('ops-parent', 'ops', ['workspace=ops'], ['call'], '  - name: call\n    call: fin-child\n'),
  dag('data-load', 'data', ['workspace=data'], ['load'], echo('load', 'mark-data-load')),
  dag('plain-job', 'default', [], ['work'], echo('work', 'mark-plain-job')),
  // Dagu refuses to run a DAG whose workspace label is ambiguous; it is listed and read all the same.
  dag('odd-label', 'invalid', ['workspace=ops', 'workspace=finance'], [], echo('odd', 'mark-odd-label')),
];

export interface WorldPage {
  workspace: string;
  path: string;
  marker: string;
}

export const PAGES: readonly WorldPage[] = [
  { workspace: 'finance', path: 'ledger-notes', marker: 'mark-wiki-finance' },
  { workspace: 'ops', path: 'runbooks/restart-notes', marker: 'mark-wiki-ops' },
  { workspace: 'default', path: 'intro-notes', marker: 'mark-wiki-default' },
];

/** A text only some readers may see: those who read one of `visibleIn` (empty: no narrowed reader). */
export interface Token {
  text: string;
  visibleIn: readonly string[];
  what: string;
}

export interface World {
  dagu: DaguInstance;
  /** DAG name → its one run's id (none for the DAG that cannot run). */
  runs: Record<string, string>;
  /** The child run of ops-parent's `call` step (a run of fin-child). */
  subRun: string;
  tokens: Token[];
}

/** Starts a Dagu 2.x of its own and writes, runs and waits for the world. */
export async function startWorld(): Promise<World> {
  const dagu = await startDagu({ generation: 2 });
  try {
    const dir = join(dagu.home, 'dags');
    mkdirSync(dir, { recursive: true });
    for (const { name, spec } of DAGS) writeFileSync(join(dir, `${name}.yaml`), spec);
    for (const name of WORKSPACES) await expectOk(dagu, '/workspaces', { name });
    for (const page of PAGES) {
      const content = `---\ntitle: ${page.path}\n---\n# ${page.path}\n\n${page.marker}, a word every page has: worldpage.\n`;
      await expectOk(dagu, `/wiki?workspace=${page.workspace}`, { id: page.path, content });
    }
    const runnable = DAGS.filter((entry) => entry.steps.length > 0 && entry.name !== 'fin-child');
    const ids = await Promise.all(runnable.map((entry) => startRun(dagu, entry.name)));
    const runs: Record<string, string> = {};
    let subRun = '';
    for (const [index, entry] of runnable.entries()) {
      const id = ids[index]!;
      runs[entry.name] = id;
      const details = await waitForRun(dagu, entry.name, id);
      if (entry.name === 'ops-parent') {
        const node = (details.nodes as Array<{ subRuns?: Array<{ dagRunId: string }> }>)[0];
        subRun = node?.subRuns?.[0]?.dagRunId ?? '';
      }
    }
    if (subRun === '') throw new Error('world: ops-parent recorded no child run');
    return { dagu, runs, subRun, tokens: tokensOf(runs, subRun) };
  } catch (error) {
    await dagu.stop();
    throw error;
  }
}

async function expectOk(dagu: DaguInstance, path: string, body: unknown): Promise<void> {
  const { status, body: answer } = await daguApi(dagu, path, { method: 'POST', body });
  if (status !== 200 && status !== 201)
    throw new Error(`world: POST ${path}: HTTP ${status} ${JSON.stringify(answer)}`);
}

function tokensOf(runs: Record<string, string>, subRun: string): Token[] {
  const tokens: Token[] = [];
  const add = (text: string, visibleIn: readonly string[], what: string) =>
    tokens.push({ text, visibleIn, what });
  for (const entry of DAGS) {
    const visibleIn = entry.workspace === 'invalid' ? [] : [entry.workspace];
    // ops-parent's own spec names the DAG it calls: that name is the ops readers' to see too.
    add(entry.name, entry.name === 'fin-child' ? ['finance', 'ops'] : visibleIn, `DAG ${entry.name}`);
    add(`mark-${entry.name}`, visibleIn, `the log of ${entry.name}`);
    const id = runs[entry.name];
    if (id !== undefined) add(id, visibleIn, `the run of ${entry.name}`);
  }
  // The child run's id is listed in its parent's run details (ops), and is fin-child's (finance).
  add(subRun, ['ops', 'finance'], 'the child run of ops-parent');
  for (const page of PAGES) {
    add(page.marker, [page.workspace], `the page ${page.workspace}/${page.path}`);
    add(page.path, [page.workspace], `the path of ${page.workspace}/${page.path}`);
  }
  return tokens;
}
