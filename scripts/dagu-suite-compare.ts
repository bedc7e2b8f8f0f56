// The pure half of `npm run test:dagu-suite` (scripts/dagu-suite.ts): reading `go test -json` events,
// finding the leaf cases, reading the baseline, and comparing the gateway's run with Dagu's.
import { parse } from 'yaml';

export type Outcome = 'pass' | 'fail' | 'skip';

/** One run of one Go test package: every test (and subtest) that ended, by name, and its output. */
export interface PackageRun {
  outcomes: Map<string, Outcome>;
  output: Map<string, string[]>;
  /** The package's own result (`fail` too when the binary crashed or timed out). */
  packageOutcome: Outcome | undefined;
}

/** Reads the JSON lines of `go tool test2json` (the format of `go test -json`); other lines are ignored. */
export function parseTestEvents(text: string): PackageRun {
  const run: PackageRun = { outcomes: new Map(), output: new Map(), packageOutcome: undefined };
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let event: { Action?: unknown; Test?: unknown; Output?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      continue;
    }
    const test = typeof event.Test === 'string' ? event.Test : undefined;
    const action = event.Action;
    if (action === 'output' && test !== undefined && typeof event.Output === 'string') {
      const lines = run.output.get(test) ?? [];
      lines.push(event.Output);
      run.output.set(test, lines);
    } else if (action === 'pass' || action === 'fail' || action === 'skip') {
      if (test === undefined) run.packageOutcome = action;
      else run.outcomes.set(test, action);
    }
  }
  return run;
}

/** Tests that have no subtests of their own (`go test` names subtests `Parent/child`). */
export function leafCases(names: Iterable<string>): string[] {
  const all = [...names];
  const parents = new Set<string>();
  for (const name of all) {
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) parents.add(parts.slice(0, i).join('/'));
  }
  return all.filter((name) => !parents.has(name)).sort();
}

/** Counts of one side: top-level tests and leaf cases, passed and run. */
export interface Counts {
  tests: number;
  testsPassed: number;
  leaves: number;
  leavesPassed: number;
}

/** `outcomes` keyed `package/Test/sub`. */
export function counts(outcomes: ReadonlyMap<string, Outcome>): Counts {
  const top = [...outcomes.keys()].filter((name) => name.split('/').length === 2);
  const leaves = leafCases(outcomes.keys());
  return {
    tests: top.length,
    testsPassed: top.filter((name) => outcomes.get(name) === 'pass').length,
    leaves: leaves.length,
    leavesPassed: leaves.filter((name) => outcomes.get(name) === 'pass').length,
  };
}

export type BaselineKind = 'contract' | 'design';

export interface BaselineEntry {
  /** `package/Test/subtest`, as `go test` names it (spaces in subtest names become `_`). */
  case: string;
  kind: BaselineKind;
  /** For `contract`: a quote of Spec 021, checked word for word against the spec. */
  clause?: string;
  reason: string;
}

/** Reads test/dagu-suite/baseline.yml; throws with every problem found. */
export function parseBaseline(text: string): BaselineEntry[] {
  const document = parse(text) as { differences?: unknown } | null;
  const list = document?.differences;
  if (!Array.isArray(list)) throw new Error('baseline: `differences:` must be a list');
  const problems: string[] = [];
  const entries: BaselineEntry[] = [];
  const seen = new Set<string>();
  list.forEach((raw: unknown, index) => {
    const at = `baseline: entry ${index + 1}`;
    if (raw === null || typeof raw !== 'object') {
      problems.push(`${at} is not a mapping`);
      return;
    }
    const item = raw as Record<string, unknown>;
    const unknown = Object.keys(item).filter((key) => !['case', 'kind', 'clause', 'reason'].includes(key));
    if (unknown.length > 0) problems.push(`${at}: unknown keys ${unknown.join(', ')}`);
    if (typeof item.case !== 'string' || item.case.split('/').length < 2) {
      problems.push(`${at}: \`case\` must be package/Test[/subtest]`);
      return;
    }
    if (seen.has(item.case)) problems.push(`${at}: ${item.case} is listed twice`);
    seen.add(item.case);
    if (item.kind !== 'contract' && item.kind !== 'design')
      problems.push(`${at} (${item.case}): \`kind\` must be contract or design`);
    if (typeof item.reason !== 'string' || item.reason.trim() === '')
      problems.push(`${at} (${item.case}): \`reason\` is required`);
    if (item.kind === 'contract' && (typeof item.clause !== 'string' || item.clause.trim() === ''))
      problems.push(`${at} (${item.case}): a contract difference quotes its clause`);
    const entry: BaselineEntry = {
      case: item.case,
      kind: item.kind === 'contract' ? 'contract' : 'design',
      reason: typeof item.reason === 'string' ? item.reason.trim() : '',
    };
    if (typeof item.clause === 'string') entry.clause = item.clause.trim();
    entries.push(entry);
  });
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return entries;
}

/** Collapses runs of white space, so a clause may wrap in YAML where the spec does not. */
const squeeze = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Clauses of `entries` that are not in `spec` word for word. */
export function missingClauses(entries: readonly BaselineEntry[], spec: string): string[] {
  const text = squeeze(spec);
  return entries
    .filter((entry) => entry.clause !== undefined && !text.includes(squeeze(entry.clause)))
    .map((entry) => `${entry.case}: clause not found in Spec 021: "${entry.clause}"`);
}

export interface Comparison {
  /** Why the run fails; empty when it passes. */
  problems: string[];
  /** Baselined cases that failed on the gateway as expected. */
  accepted: string[];
}

/**
 * The rules: Dagu must pass every leaf case (it is the reference); on the gateway every leaf case of
 * Dagu's run must pass unless baselined, a baselined case must still fail (else the entry is stale),
 * every baselined case must exist in Dagu's run, and a gateway test failing without a failing leaf
 * below it (a failure after its subtests) counts as a failure of its own.
 */
export function compare(
  dagu: ReadonlyMap<string, Outcome>,
  gateway: ReadonlyMap<string, Outcome>,
  baseline: readonly BaselineEntry[],
): Comparison {
  const problems: string[] = [];
  const accepted: string[] = [];
  const listed = new Set(baseline.map((entry) => entry.case));
  const daguLeaves = leafCases(dagu.keys());
  for (const [name, outcome] of dagu) {
    if (outcome !== 'pass') problems.push(`Dagu's own /mcp: ${name} ${outcome} (the reference must pass)`);
  }
  if (daguLeaves.length === 0) problems.push("Dagu's own /mcp: no test ran");
  const gatewayLeaves = new Set(leafCases(gateway.keys()));
  for (const name of new Set([...daguLeaves, ...gatewayLeaves])) {
    const outcome = gateway.get(name) ?? 'did not run';
    if (listed.has(name)) {
      if (outcome === 'pass') problems.push(`gateway: ${name} passes now; remove it from the baseline`);
      else accepted.push(name);
    } else if (outcome !== 'pass') {
      problems.push(`gateway: ${name} ${outcome} (not in the baseline)`);
    }
  }
  for (const entry of baseline) {
    if (!dagu.has(entry.case) && !gateway.has(entry.case))
      problems.push(`baseline: ${entry.case} is in neither run (renamed or removed?)`);
    else if (!daguLeaves.includes(entry.case) && !gatewayLeaves.has(entry.case))
      problems.push(`baseline: ${entry.case} is not a leaf case; list its failing subtests instead`);
  }
  for (const [name, outcome] of gateway) {
    if (outcome !== 'fail' || gatewayLeaves.has(name)) continue;
    const below = [...gateway].some(([child, o]) => child.startsWith(`${name}/`) && o === 'fail');
    if (!below)
      problems.push(`gateway: ${name} fails with no failing subtest (a failure of the test itself)`);
  }
  return { problems, accepted: accepted.sort() };
}
