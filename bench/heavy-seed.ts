/**
 * The wide and long reads' seed, on a real Dagu 2.x with real runs (bench:heavy, bench:peer's distinct
 * reads, soak's heavy mix). Nothing is cached between runs of a benchmark: every run seeds anew and
 * reports how long it took.
 *
 * - `steps-<n>-<k>`: DAGs of n steps (each `true`), one run each, k < HEAVY_DISTINCT (default 4), for
 *   the per-step cost (n in 2, 50, 150 by default) and for distinct targets per call;
 * - `big-log-<k>`: one step printing 10,000 lines of 91 bytes (0.9 MB of stdout), one run each;
 * - `filler-<i>`: HEAVY_DAGS (default 200) one-step DAGs, run until there are HEAVY_RUNS runs (default
 *   500) in all, so `dags perPage=200` and `runs limit=500` come back full.
 * DAG names are unique per concurrent run: Dagu refuses a second start of a DAG that is running.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DaguInstance, daguApi } from '../test/support/dagu.ts';

export const BIG_LOG_LINES = 10_000;
export const BIG_LOG_STEP = 'print';

export interface HeavySeedOptions {
  /** One-step DAGs besides the others. */
  fillerDags: number;
  /** Runs in all (the filler DAGs are run again until there are this many). */
  totalRuns: number;
  /** Runs (each of its own DAG) per step count and of the big log: the distinct targets a cell cycles over. */
  distinct: number;
  stepCounts: readonly number[];
  /** Runs started at once while seeding. */
  parallel: number;
}

export function heavySeedOptions(env: NodeJS.ProcessEnv = process.env): HeavySeedOptions {
  return {
    fillerDags: Number(env.HEAVY_DAGS ?? 200),
    totalRuns: Number(env.HEAVY_RUNS ?? 500),
    distinct: Number(env.HEAVY_DISTINCT ?? 4),
    stepCounts: (env.HEAVY_STEP_COUNTS ?? '2,50,150').split(',').map(Number),
    parallel: Number(env.HEAVY_SEED_PARALLEL ?? 8),
  };
}

export interface RunRef {
  name: string;
  dagRunId: string;
}

export interface HeavySeed {
  /** Step count → its runs (each of its own DAG). */
  stepRuns: Map<number, RunRef[]>;
  bigLogRuns: RunRef[];
  dagCount: number;
  runCount: number;
  seedSeconds: number;
}

const stepsDag = (steps: number) =>
  `steps:\n${Array.from({ length: steps }, (_, i) => `  - name: s${String(i + 1).padStart(3, '0')}\n    command: "true"\n`).join('')}`;

// 10,000 lines of 91 bytes: a zero-padded counter and 84 digits.
const BIG_LOG_DAG = `steps:
  - name: ${BIG_LOG_STEP}
    command: awk 'BEGIN { for (i = 1; i <= ${BIG_LOG_LINES}; i++) printf "%05d %084d\\n", i, i }'
`;

const FILLER_DAG = `description: filler for wide lists
steps:
  - name: only
    command: "true"
`;

const FINISHED = new Set([2, 3, 4, 6]);

/** Waits until a run is finished (success, failure, aborted, partial) with its finish time recorded. */
async function waitFinished(instance: DaguInstance, run: RunRef): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    // A busy Dagu may take longer than the client's 10 s to answer: ask again until the deadline.
    const { status, body } = await daguApi(
      instance,
      `/dag-runs/${encodeURIComponent(run.name)}/${encodeURIComponent(run.dagRunId)}`,
    ).catch(() => ({ status: 0, body: undefined }));
    const details = (body as { dagRunDetails?: { status?: number; finishedAt?: string } } | undefined)
      ?.dagRunDetails;
    const finishedAt = details?.finishedAt;
    if (status === 200 && FINISHED.has(details?.status ?? -1) && finishedAt && finishedAt !== '-') {
      if (details?.status !== 4) throw new Error(`seed: ${run.name} ended with status ${details?.status}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`seed: ${run.name}/${run.dagRunId} did not finish in 180 s`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/**
 * Starts a run, waiting as long as a busy Dagu needs (the test support's client gives up after 10 s,
 * and a start cannot simply be sent again: the DAG may be running by then).
 */
async function startRun(instance: DaguInstance, name: string): Promise<string> {
  const response = await fetch(`${instance.url}${instance.apiBase}/dags/${encodeURIComponent(name)}/start`, {
    method: 'POST',
    headers: {
      accept: 'application/json',
      'content-type': 'application/json',
      ...(instance.token === undefined ? {} : { authorization: `Bearer ${instance.token}` }),
    },
    body: '{}',
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  const dagRunId = (JSON.parse(text) as { dagRunId?: unknown }).dagRunId;
  if (response.status !== 200 || typeof dagRunId !== 'string') {
    throw new Error(`seed: starting ${name} failed: HTTP ${response.status} ${text}`);
  }
  return dagRunId;
}

/** Runs each named DAG (start, wait for its end), `parallel` at a time, in the order given. */
export async function runAll(instance: DaguInstance, names: readonly string[], parallel: number) {
  const runs: RunRef[] = new Array(names.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, parallel) }, async () => {
      while (next < names.length) {
        const index = next++;
        const name = names[index]!;
        const run = { name, dagRunId: await startRun(instance, name) };
        await waitFinished(instance, run);
        runs[index] = run;
      }
    }),
  );
  return runs;
}

/** Writes DAG files into the instance's `dags` folder. */
export function writeDags(instance: DaguInstance, files: Record<string, string>): void {
  const dir = join(instance.home, 'dags');
  mkdirSync(dir, { recursive: true });
  for (const [name, spec] of Object.entries(files)) writeFileSync(join(dir, `${name}.yaml`), spec);
}

/** Counts of DAGs and runs as Dagu reports them (to print what was read). */
async function counts(instance: DaguInstance): Promise<{ dags: number; runs: number }> {
  const dags = (await daguApi(instance, '/dags?perPage=1')).body as {
    pagination?: { totalRecords?: number };
  };
  const runs = (await daguApi(instance, '/dag-runs?limit=500')).body as { dagRuns?: unknown[] };
  return { dags: dags.pagination?.totalRecords ?? 0, runs: runs.dagRuns?.length ?? 0 };
}

export async function seedHeavy(
  instance: DaguInstance,
  options: HeavySeedOptions = heavySeedOptions(),
): Promise<HeavySeed> {
  const started = performance.now();
  const files: Record<string, string> = {};
  const heavyNames: string[] = [];
  for (let k = 0; k < options.distinct; k++) {
    for (const steps of options.stepCounts) {
      files[`steps-${steps}-${k}`] = stepsDag(steps);
      heavyNames.push(`steps-${steps}-${k}`);
    }
    files[`big-log-${k}`] = BIG_LOG_DAG;
    heavyNames.push(`big-log-${k}`);
  }
  const fillers = Array.from(
    { length: options.fillerDags },
    (_, i) => `filler-${String(i).padStart(3, '0')}`,
  );
  for (const name of fillers) files[name] = FILLER_DAG;
  writeDags(instance, files);

  const heavy = await runAll(instance, heavyNames, options.parallel);
  // Fillers round after round: a DAG's next run starts long after its last one ended.
  const already = (await counts(instance)).runs;
  const fillerRuns = Math.max(0, options.totalRuns - already);
  const order = Array.from({ length: fillerRuns }, (_, i) => fillers[i % Math.max(1, fillers.length)]!);
  if (fillers.length > 0) await runAll(instance, order, options.parallel);

  const stepRuns = new Map<number, RunRef[]>();
  for (const steps of options.stepCounts) {
    stepRuns.set(
      steps,
      heavy.filter((run) => run.name.startsWith(`steps-${steps}-`)),
    );
  }
  const total = await counts(instance);
  return {
    stepRuns,
    bigLogRuns: heavy.filter((run) => run.name.startsWith('big-log-')),
    dagCount: total.dags,
    runCount: total.runs,
    seedSeconds: (performance.now() - started) / 1000,
  };
}
