import { DEFAULT_WORKSPACE, type ReadTarget } from '../core/contract.ts';
import { REFERENCE_TOPICS } from '../reference/topics.ts';
import type { ToolErrorObject } from './errors.ts';
import { isQueryTarget, QUERY_TABLE, queryEscape } from './input/index.ts';
import type { ReadFacts, ReadOutcome, ReadService } from './service.ts';
import type { CallContext } from './types.ts';
import { workspaceOfLabels } from './upstream/access.ts';

/**
 * Argument completion: the values a caller could give a field of `dagu_read` (or a `dagu://` URI
 * variable of the same name), found through the read service itself. Every suggestion is therefore a
 * read the caller may make: the allowlist filters completions exactly as it filters reads, and a DAG
 * or run the caller cannot see completes to nothing, like one that does not exist.
 */

/** Fields whose values come from Dagu or the reference (the tool's field names). */
export type CompletionField = 'name' | 'dagRunId' | 'subRunId' | 'stepName' | 'workspace' | 'path' | 'topic';

export type CompletionRequest =
  /** A field value; `context` holds the fields already chosen (`name` for `dagRunId`, …). */
  | { kind: 'field'; field: CompletionField; value: string; context: Readonly<Record<string, string>> }
  /** The query parameter names of a target, completing the last `&`-separated part of `value`. */
  | { kind: 'queryName'; target: ReadTarget; value: string }
  /** The values of one query parameter with a closed set of values (`stream`, `order`, …). */
  | { kind: 'queryValue'; target: ReadTarget; param: string; value: string };

export interface Completion {
  /** Suggestions in the order to show them, at most the request's limit. */
  values: string[];
  /** How many suggestions exist, when known. */
  total?: number;
  /** More suggestions exist than `values` holds. */
  hasMore: boolean;
}

export type CompletionOutcome =
  | { ok: true; completion: Completion; facts: ReadFacts }
  | { ok: false; error: ToolErrorObject; facts: ReadFacts; cause?: unknown };

export interface CompletionService {
  complete(request: CompletionRequest, call: CallContext, limit: number): Promise<CompletionOutcome>;
}

/** A read that found nothing the caller may see: no suggestions, not an error. */
const NOTHING_TO_SUGGEST: ReadonlySet<string> = new Set([
  'resource_not_found',
  'unauthorized',
  'invalid_tool_input',
  'invalid_resource_uri',
  'unsupported_read_target',
  'unsupported_resource',
]);

/** The newest runs offered for `dagRunId` (the `runs` target allows up to 500). */
const RUN_PAGE = 100;
/** DAGs and wiki pages fetched per completion (Dagu's page maximum). */
const LIST_PAGE = 200;

type Json = Record<string, unknown>;

const objects = (value: unknown): Json[] =>
  Array.isArray(value)
    ? value.filter((entry): entry is Json => typeof entry === 'object' && entry !== null)
    : [];

const strings = (values: Iterable<unknown>): string[] =>
  [...values].filter((value): value is string => typeof value === 'string' && value !== '');

/** Suggestions found (`complete: false` when Dagu holds more than were fetched). */
interface Found {
  values: string[];
  complete: boolean;
  facts: ReadFacts;
}

class NothingFound extends Error {
  constructor(readonly facts: ReadFacts) {
    super('nothing to suggest');
  }
}

class ReadFailed extends Error {
  constructor(readonly outcome: Extract<ReadOutcome, { ok: false }>) {
    super(outcome.error.message);
  }
}

/** Reads through the read service as the caller; a read that finds nothing suggests nothing. */
type Reader = (args: Json, call: CallContext) => Promise<{ data: Json; facts: ReadFacts }>;

const readerOf =
  (reads: ReadService): Reader =>
  async (args, call) => {
    const outcome = await reads.read(args, call);
    if (outcome.ok) return { data: outcome.envelope.data, facts: outcome.facts };
    if (NOTHING_TO_SUGGEST.has(outcome.error.code)) throw new NothingFound(outcome.facts);
    throw new ReadFailed(outcome);
  };

/** DAG names starting with `prefix`: Dagu's name filter matches anywhere, so the prefix is checked here. */
async function dagNames(data: Reader, prefix: string, call: CallContext): Promise<Found> {
  const query = prefix === '' ? `perPage=${LIST_PAGE}` : `name=${queryEscape(prefix)}&perPage=${LIST_PAGE}`;
  const { data: page, facts } = await data({ target: 'dags', query }, call);
  const names = strings(objects(page.items).map((item) => item.name));
  const pagination = (page.pagination ?? {}) as Json;
  const complete = typeof pagination.totalPages !== 'number' || pagination.totalPages <= 1;
  return { values: names.filter((name) => startsWith(name, prefix)), complete, facts };
}

/** `latest`, then the DAG's runs newest first. */
async function runIds(data: Reader, name: string, call: CallContext): Promise<Found> {
  const query = `name=${queryEscape(name)}&limit=${RUN_PAGE}`;
  const { data: page, facts } = await data({ target: 'runs', query }, call);
  // Dagu's name filter is not exact on every version: keep the DAG's own runs only.
  const ids = strings(
    objects(page.items)
      .filter((run) => run.name === name)
      .map((run) => run.dagRunId),
  );
  const values = ids.length > 0 ? ['latest', ...ids] : [];
  return { values, complete: page.nextCursor === undefined, facts };
}

async function runSteps(data: Reader, context: Readonly<Record<string, string>>, call: CallContext) {
  const { name, dagRunId = 'latest', subRunId } = context;
  if (name === undefined) throw new NothingFound({});
  const args: Json = { target: 'run', name, dagRunId, ...(subRunId === undefined ? {} : { subRunId }) };
  const { data: run, facts } = await data(args, call);
  return { steps: objects(run.steps), facts };
}

async function stepNames(
  data: Reader,
  context: Readonly<Record<string, string>>,
  call: CallContext,
): Promise<Found> {
  const { steps, facts } = await runSteps(data, context, call);
  return { values: strings(steps.map((step) => step.name)), complete: true, facts };
}

async function subRunIds(
  data: Reader,
  context: Readonly<Record<string, string>>,
  call: CallContext,
): Promise<Found> {
  // Sub runs hang off the root run's steps; a sub run's own children are not addressable here.
  const { subRunId: _ignored, ...root } = context;
  const { steps, facts } = await runSteps(data, root, call);
  const ids = strings(steps.flatMap((step) => objects(step.subRuns).map((child) => child.dagRunId)));
  return { values: [...new Set(ids)], complete: true, facts };
}

/**
 * `default`, the workspaces the caller's grants name, and every workspace the DAG list (by the DAGs'
 * `workspace` labels) and the wiki report: those the caller may read.
 */
async function workspaces(data: Reader, call: CallContext): Promise<Found> {
  const seen = new Set<string>([DEFAULT_WORKSPACE, ...(call.access.exactWorkspaces ?? [])]);
  const dags = await data({ target: 'dags', query: `perPage=${LIST_PAGE}` }, call);
  // The wiki is a second, optional source: Dagu 1.x has none.
  const wiki = await data({ target: 'wiki', query: `flat=true&perPage=${LIST_PAGE}` }, call).catch(
    () => undefined,
  );
  for (const item of objects(dags.data.items)) {
    const workspace = workspaceOfLabels(strings(Array.isArray(item.labels) ? item.labels : []));
    if (workspace !== undefined) seen.add(workspace);
  }
  for (const entry of objects(wiki?.data.items)) {
    if (typeof entry.workspace === 'string' && entry.workspace !== '') seen.add(entry.workspace);
  }
  const values = [...seen].filter((workspace) => call.access.canReadWorkspace(workspace));
  return { values, complete: true, facts: dags.facts };
}

/** Page paths of a workspace's wiki (Dagu 2.x). */
async function wikiPaths(data: Reader, workspace: string | undefined, call: CallContext): Promise<Found> {
  if (workspace === undefined) throw new NothingFound({});
  const { data: page, facts } = await data(
    { target: 'wiki', workspace, query: `flat=true&perPage=${LIST_PAGE}` },
    call,
  );
  const paths = strings(objects(page.items).map((item) => item.id));
  const pagination = (page.pagination ?? {}) as Json;
  const complete = typeof pagination.totalPages !== 'number' || pagination.totalPages <= 1;
  return { values: paths, complete, facts };
}

async function field(
  data: Reader,
  request: Extract<CompletionRequest, { kind: 'field' }>,
  call: CallContext,
): Promise<Found> {
  const { context } = request;
  switch (request.field) {
    case 'name':
      return dagNames(data, request.value, call);
    case 'dagRunId':
      if (context.name === undefined) throw new NothingFound({});
      return runIds(data, context.name, call);
    case 'stepName':
      return stepNames(data, context, call);
    case 'subRunId':
      return subRunIds(data, context, call);
    case 'workspace':
      return workspaces(data, call);
    case 'path':
      return wikiPaths(data, context.workspace, call);
    case 'topic':
      return { values: REFERENCE_TOPICS.map((topic) => topic.name), complete: true, facts: {} };
  }
}

function queryNames(target: ReadTarget, value: string): Found {
  if (!isQueryTarget(target)) return { values: [], complete: true, facts: { target } };
  const cut = value.lastIndexOf('&') + 1;
  const [before, partial] = [value.slice(0, cut), value.slice(cut)];
  const given = new Set(before.split('&').map((pair) => pair.split('=')[0]));
  const names = Object.entries(QUERY_TABLE[target].params)
    .filter(([name, spec]) => spec.repeatable || !given.has(name))
    .map(([name]) => name);
  return {
    values: names.filter((name) => name.startsWith(partial)).map((name) => `${before}${name}=`),
    complete: true,
    facts: { target },
  };
}

function queryValues(target: ReadTarget, param: string): Found {
  const rule = isQueryTarget(target) ? QUERY_TABLE[target].params[param]?.rule : undefined;
  const values =
    rule?.kind === 'oneOf'
      ? [...rule.values]
      : rule?.kind === 'integer' && rule.max !== undefined && rule.max - rule.min < 20
        ? Array.from({ length: rule.max - rule.min + 1 }, (_, i) => String(rule.min + i))
        : [];
  return { values, complete: true, facts: { target } };
}

async function complete(
  data: Reader,
  request: CompletionRequest,
  call: CallContext,
  limit: number,
): ReturnType<CompletionService['complete']> {
  try {
    const found =
      request.kind === 'field'
        ? await field(data, request, call)
        : request.kind === 'queryName'
          ? queryNames(request.target, request.value)
          : queryValues(request.target, request.param);
    // Names were matched by Dagu or above; everything else by its beginning, as typed.
    const matching =
      request.kind === 'field' && request.field === 'name'
        ? found.values
        : request.kind === 'queryName'
          ? found.values
          : found.values.filter((value) => startsWith(value, request.value));
    const values = matching.slice(0, limit);
    const hasMore = matching.length > values.length || !found.complete;
    const completion: Completion = {
      values,
      hasMore,
      ...(found.complete ? { total: matching.length } : {}),
    };
    return { ok: true, completion, facts: found.facts };
  } catch (error) {
    if (error instanceof NothingFound) {
      return { ok: true, completion: { values: [], total: 0, hasMore: false }, facts: error.facts };
    }
    if (error instanceof ReadFailed) return error.outcome;
    throw error;
  }
}

export function createCompletionService(reads: ReadService): CompletionService {
  const data = readerOf(reads);
  return { complete: (request, call, limit) => complete(data, request, call, limit) };
}

/** Case-insensitive prefix match: what a caller types need not match Dagu's capitalisation. */
function startsWith(value: string, prefix: string): boolean {
  return value.toLowerCase().startsWith(prefix.toLowerCase());
}
