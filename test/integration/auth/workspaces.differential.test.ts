// Workspace narrowing, differential: a Dagu 2.x of this file's own holds DAGs, runs, a child run,
// foreach items and wiki pages in three workspaces, `default` and an ambiguous label
// (test/support/workspace-world.ts). Every read of every target and URI shape, as a tool call in
// target and URI mode, as resources/read and as completion, is made by an unrestricted key and by three
// narrowed callers: an API key's `workspaces`, a token's workspace scopes, and a groups-file mapping of
// a token's groups. For each narrowed answer:
//   - nothing of a workspace the caller lacks appears in it (results, errors, suggestions), beyond what
//     the caller itself sent;
//   - a read of what the caller may see answers exactly as the unrestricted read does;
//   - a read of a hidden DAG or run answers exactly as the same read of one that does not exist.
// Random mixes of names, runs and steps across DAGs (fast-check) add reads the enumeration does not make.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  bearer,
  type CapturedGateway,
  claims,
  hs256,
  newApiKey,
  newSecret,
  startCapturedGateway,
  tempDir,
  writeKeysFile,
} from '../../support/auth-fixtures.ts';
import { connectModern, type TestClient } from '../../support/gateway.ts';
import {
  DAGS,
  PAGES,
  startWorld,
  type Token,
  WORKSPACES,
  type World,
} from '../../support/workspace-world.ts';

const SECRET = newSecret();
const ADMIN_KEY = newApiKey('admin');
const OPS_KEY = newApiKey('ops');
const MISSING_DAG = 'no-such-dag';
const MISSING_RUN = 'no-such-run';

interface Caller {
  label: string;
  token: string;
  /** The workspaces it may read. */
  reads: readonly string[];
}

const CALLERS: readonly Caller[] = [
  { label: 'API key with workspaces: [ops]', token: OPS_KEY, reads: ['ops'] },
  {
    label: 'token with the workspace scopes of data and default',
    token: hs256(
      claims('scoped-user', {
        scope: 'dagu.read:workspace/data dagu.read:workspace/default',
        groups: ['staff'],
      }),
      SECRET,
    ),
    reads: ['data', 'default'],
  },
  {
    label: 'token whose group the groups file maps to finance',
    token: hs256(claims('analyst', { scope: 'dagu.read', groups: ['analysts'] }), SECRET),
    reads: ['finance'],
  },
];

let world: World;
let gateway: CapturedGateway;
let admin: TestClient;
const narrowed = new Map<Caller, TestClient>();

before(async () => {
  world = await startWorld();
  const dir = tempDir('workspaces-');
  const groupsFile = join(dir, 'groups.yaml');
  // With a groups file a token reads what its groups grant: staff every workspace (its scopes narrow it).
  writeFileSync(groupsFile, 'groups:\n  analysts: { workspaces: [finance] }\n  staff: {}\n');
  gateway = await startCapturedGateway({
    DAGU_URL: world.dagu.url,
    DAGU_API_BASE: world.dagu.apiBase,
    AUTH_API_KEYS_FILE: writeKeysFile(
      [
        { name: 'admin', key: ADMIN_KEY },
        { name: 'ops-only', key: OPS_KEY, workspaces: ['ops'] },
      ],
      dir,
    ),
    AUTH_JWT_SECRET: SECRET,
    AUTH_REQUIRE_SCOPES: 'always',
    AUTH_GROUPS_FILE: groupsFile,
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  admin = await connectModern(gateway.mcpUrl, bearer(ADMIN_KEY));
  for (const caller of CALLERS)
    narrowed.set(caller, await connectModern(gateway.mcpUrl, bearer(caller.token)));
});

after(async () => {
  await admin?.close();
  for (const client of narrowed.values()) await client.close();
  await gateway?.close();
  await world?.dagu.stop();
});

// ---- the reads -------------------------------------------------------------------------------

type Args = Record<string, unknown>;

/** A read as any of the four ways a caller makes it. */
type Read =
  | { kind: 'tool'; args: Args }
  | { kind: 'resource'; uri: string }
  | { kind: 'complete'; template: string; argument: string; value: string; context?: Record<string, string> };

const dagNamed = (name: string) => DAGS.find((entry) => entry.name === name);
const workspaceOf = (name: string) => dagNamed(name)?.workspace;

/** Every target in target mode, over every DAG (and one that does not exist), run and workspace. */
function targetReads(): Args[] {
  const reads: Args[] = [];
  for (const query of [
    undefined,
    'perPage=200',
    'name=fin',
    'name=ops',
    'perPage=1&page=2',
    'labels=workspace=finance',
  ]) {
    reads.push(query === undefined ? { target: 'dags' } : { target: 'dags', query });
  }
  for (const query of [undefined, 'limit=1', 'labels=workspace=finance', 'dagRunId=latest']) {
    reads.push(query === undefined ? { target: 'runs' } : { target: 'runs', query });
  }
  for (const search of ['mark-', 'echo', 'fin']) {
    for (const workspace of ['all', 'default', ...WORKSPACES])
      reads.push({ target: 'dag_search', search, workspace });
  }
  for (const workspace of ['all', 'default', ...WORKSPACES]) {
    reads.push({ target: 'wiki', workspace }, { target: 'wiki_search', search: 'worldpage', workspace });
  }
  for (const page of PAGES) reads.push({ target: 'wiki_page', workspace: page.workspace, path: page.path });
  for (const name of [...DAGS.map((entry) => entry.name), MISSING_DAG]) {
    reads.push({ target: 'dag', name }, { target: 'dag_spec', name });
    reads.push(
      { target: 'runs', query: `name=${name}` },
      { target: 'runs', query: `name=${name}&dagRunId=latest` },
    );
    const id = world.runs[name] ?? MISSING_RUN;
    const steps = dagNamed(name)?.steps ?? ['work'];
    for (const dagRunId of [id, 'latest']) {
      reads.push({ target: 'run', name, dagRunId }, { target: 'run_logs', name, dagRunId });
      for (const stepName of steps) reads.push({ target: 'step_log', name, dagRunId, stepName });
    }
  }
  const parent = world.runs['ops-parent']!;
  for (const subRunId of [world.subRun, MISSING_RUN]) {
    reads.push({ target: 'run', name: 'ops-parent', dagRunId: parent, subRunId });
    reads.push({ target: 'step_log', name: 'ops-parent', dagRunId: 'latest', subRunId, stepName: 'inner' });
  }
  const each = { name: 'fin-each', dagRunId: world.runs['fin-each']!, stepName: 'each' };
  reads.push({ target: 'foreach_items', ...each }, { target: 'foreach_item', ...each, item: 'q1' });
  reads.push({ target: 'step_log', ...each, item: 'q2', bodyStepName: 'post' });
  return reads;
}

/** The `dagu://` URI of a target-mode read, when its target has one. */
function uriOf(args: Args): string | undefined {
  const { target, name, dagRunId, subRunId, stepName, item, bodyStepName, workspace, path, query } =
    args as Record<string, string | undefined>;
  const q = query === undefined ? '' : `?${query}`;
  const run = `dagu://runs/${name}/${dagRunId}${subRunId === undefined ? '' : `/sub/${subRunId}`}`;
  switch (target) {
    case 'dags':
      return `dagu://dags${q}`;
    case 'runs':
      return `dagu://runs${q}`;
    case 'dag_spec':
      return `dagu://dags/${name}/spec`;
    case 'run':
      return run;
    case 'run_logs':
      return `${run}/logs`;
    case 'step_log':
      return item === undefined
        ? `${run}/steps/${stepName}/logs`
        : `${run}/steps/${stepName}/foreach/${item}/steps/${bodyStepName}/logs`;
    case 'foreach_items':
      return `${run}/steps/${stepName}/foreach`;
    case 'foreach_item':
      return `${run}/steps/${stepName}/foreach/${item}`;
    case 'wiki':
      return workspace === 'all' ? 'dagu://wiki' : `dagu://wiki/${workspace}`;
    case 'wiki_page':
      return `dagu://wiki/${workspace}/${path}`;
    default:
      return undefined;
  }
}

function completionReads(templates: readonly string[]): Read[] {
  const find = (start: string) => {
    const found = templates.find((template) => template.startsWith(start));
    if (found === undefined) throw new Error(`no resource template starts with ${start}`);
    return found;
  };
  const spec = find('dagu://dags/{name}/spec');
  const run = find('dagu://runs/{name}/{dagRunId}');
  const wiki = find('dagu://wiki/{workspace}{');
  const page = find('dagu://wiki/{workspace}/{+path}');
  const reads: Read[] = [];
  for (const value of ['', 'f', 'o', 'd', 'p', 'fin-l'])
    reads.push({ kind: 'complete', template: spec, argument: 'name', value });
  for (const name of [...DAGS.map((entry) => entry.name), MISSING_DAG]) {
    reads.push({ kind: 'complete', template: run, argument: 'dagRunId', value: '', context: { name } });
  }
  reads.push({ kind: 'complete', template: wiki, argument: 'workspace', value: '' });
  for (const workspace of ['default', ...WORKSPACES]) {
    reads.push({ kind: 'complete', template: page, argument: 'path', value: '', context: { workspace } });
  }
  return reads;
}

async function everyRead(): Promise<Read[]> {
  const tool = targetReads();
  const uris = tool.map(uriOf).filter((uri): uri is string => uri !== undefined);
  const { resourceTemplates } = await admin.listResourceTemplates();
  return [
    ...tool.map((args): Read => ({ kind: 'tool', args })),
    ...uris.map((uri): Read => ({ kind: 'tool', args: { uri } })),
    ...uris.map((uri): Read => ({ kind: 'resource', uri })),
    ...completionReads(resourceTemplates.map((template) => template.uriTemplate)),
  ];
}

// ---- answers and oracles -----------------------------------------------------------------------

/** What a caller gets back, as comparable JSON: a result, an error, or a protocol error's message. */
async function answer(client: TestClient, read: Read): Promise<unknown> {
  try {
    switch (read.kind) {
      case 'tool': {
        const result = await client.callTool(read.args);
        return {
          isError: result.isError === true,
          content: result.content,
          structured: result.structuredContent,
        };
      }
      case 'resource':
        return await client.readResource(read.uri);
      case 'complete': {
        const { completion } = await client.complete({
          ref: { type: 'ref/resource', uri: read.template },
          argument: { name: read.argument, value: read.value },
          ...(read.context === undefined ? {} : { context: { arguments: read.context } }),
        });
        return completion;
      }
    }
  } catch (error) {
    // A refused resources/read is a JSON-RPC error whose data is the contract's error object.
    const { message, code, data } = error as { message?: string; code?: number; data?: unknown };
    return { protocolError: { message, code, data } };
  }
}

const describeRead = (read: Read) => JSON.stringify(read);

/** The tokens in `text` that `caller` may not see and did not send itself. */
function leaks(caller: Caller, read: Read, text: string): Token[] {
  const sent = describeRead(read);
  return world.tokens.filter(
    (token) =>
      !token.visibleIn.some((workspace) => caller.reads.includes(workspace)) &&
      !sent.includes(token.text) &&
      text.includes(token.text),
  );
}

/** The DAGs a read names, and whether the caller sees all of them (a read naming none: collections). */
function named(read: Read): string[] {
  const text = describeRead(read);
  return DAGS.map((entry) => entry.name).filter((name) => new RegExp(`\\b${name}\\b`).test(text));
}

const visibleTo = (caller: Caller, name: string) => {
  const workspace = workspaceOf(name);
  return workspace !== undefined && caller.reads.includes(workspace);
};

/** The same read with `hidden` (a DAG, or the child run) replaced by something that does not exist. */
function asMissing(read: Read, hidden: string, missing: string): Read {
  return JSON.parse(describeRead(read).replaceAll(hidden, missing)) as Read;
}

/** An answer with suggestions dropped and `hidden` spelled as `missing`, to compare with the missing read's. */
function normalised(value: unknown, hidden: string, missing: string): unknown {
  const text = JSON.stringify(value).replaceAll(hidden, missing);
  return JSON.parse(text, (key, inner) => (key === 'didYouMean' ? undefined : inner));
}

/**
 * An answer as the unrestricted comparison sees it: an error by its code, field, target and uri (a
 * narrowed caller's read may take one more step, the run's details, whose wording is more precise).
 */
function comparable(value: unknown): unknown {
  const { isError, structured, protocolError } = value as {
    isError?: boolean;
    structured?: Record<string, unknown>;
    protocolError?: { code?: number; data?: Record<string, unknown> };
  };
  const error = protocolError?.data ?? (isError === true ? structured : undefined);
  if (error === undefined) return value;
  const { code, field, target, uri } = error;
  return { rpcCode: protocolError?.code, code, field, target, uri };
}

const isSingle = (read: Read) =>
  read.kind !== 'complete' &&
  !(
    read.kind === 'tool' &&
    ['dags', 'runs', 'dag_search', 'wiki', 'wiki_search'].includes(String(read.args.target))
  ) &&
  !(read.kind === 'resource' && /^dagu:\/\/(dags|runs|wiki(\/[^/]+)?)(\?|$)/.test(read.uri)) &&
  !(
    read.kind === 'tool' &&
    typeof read.args.uri === 'string' &&
    /^dagu:\/\/(dags|runs|wiki(\/[^/]+)?)(\?|$)/.test(read.args.uri)
  );

describe('workspace narrowing, differential over every target, URI shape, resource and completion', () => {
  let reads: Read[];
  before(async () => {
    reads = await everyRead();
  });

  for (const caller of CALLERS) {
    test(`${caller.label}: no leak, the unrestricted answer for what it sees, a missing answer for what it does not`, async () => {
      const client = narrowed.get(caller)!;
      let compared = 0;
      let hiddenChecked = 0;
      for (const read of reads) {
        const mine = await answer(client, read);
        const text = JSON.stringify(mine);
        assert.deepEqual(
          leaks(caller, read, text).map((token) => token.what),
          [],
          `${describeRead(read)} leaked: ${text.slice(0, 400)}`,
        );
        const names = named(read);
        if (!isSingle(read) || names.length === 0) continue;
        const hidden = names.find((name) => !visibleTo(caller, name));
        const subHidden =
          hidden === undefined &&
          describeRead(read).includes(world.subRun) &&
          !caller.reads.includes('finance');
        if (hidden !== undefined || subHidden) {
          const [from, to] = hidden !== undefined ? [hidden, MISSING_DAG] : [world.subRun, MISSING_RUN];
          const missing = await answer(client, asMissing(read, from, to));
          assert.deepEqual(normalised(mine, from, to), normalised(missing, from, to), describeRead(read));
          hiddenChecked++;
        } else {
          assert.deepEqual(comparable(mine), comparable(await answer(admin, read)), describeRead(read));
          compared++;
        }
      }
      // The oracles above ran on both kinds of read.
      assert.ok(compared >= 10 && hiddenChecked >= 10, `compared ${compared}, hidden ${hiddenChecked}`);
    });
  }

  test('collections list, for each narrowed caller, exactly what it may see of the unrestricted list', async () => {
    const lists: Array<[Args, (data: Record<string, unknown>) => string[]]> = [
      [
        { target: 'dags', query: 'perPage=200' },
        (data) => (data.items as Array<{ name: string }>).map((item) => item.name),
      ],
      [
        { target: 'runs', query: 'limit=500' },
        (data) => (data.items as Array<{ name: string }>).map((item) => item.name),
      ],
      [
        { target: 'dag_search', search: 'steps' },
        (data) => (data.results as Array<{ name: string }>).map((result) => result.name),
      ],
    ];
    for (const [args, namesOf] of lists) {
      const all = await admin.callTool(args);
      assert.notEqual(all.isError, true, JSON.stringify(all.structuredContent));
      const everything = namesOf(all.structuredContent!.data as Record<string, unknown>);
      for (const caller of CALLERS) {
        const mine = await narrowed.get(caller)!.callTool(args);
        assert.notEqual(mine.isError, true, JSON.stringify(mine.structuredContent));
        assert.deepEqual(
          namesOf(mine.structuredContent!.data as Record<string, unknown>),
          everything.filter((name) => visibleTo(caller, name)),
          `${caller.label}: ${JSON.stringify(args)}`,
        );
      }
    }
  });

  test('workspace completion offers each narrowed caller its own workspaces', async () => {
    const { resourceTemplates } = await admin.listResourceTemplates();
    const wiki = resourceTemplates.find((template) =>
      template.uriTemplate.startsWith('dagu://wiki/{workspace}{'),
    )!;
    for (const caller of CALLERS) {
      const { completion } = await narrowed.get(caller)!.complete({
        ref: { type: 'ref/resource', uri: wiki.uriTemplate },
        argument: { name: 'workspace', value: '' },
      });
      assert.deepEqual([...completion.values].sort(), [...caller.reads].sort(), caller.label);
    }
  });

  test('random mixes of DAGs, runs, steps and sub runs leak nothing and hide like missing', async () => {
    const names = [...DAGS.map((entry) => entry.name), MISSING_DAG];
    const runIds = [...Object.values(world.runs), world.subRun, 'latest', MISSING_RUN];
    const steps = [...DAGS.flatMap((entry) => entry.steps), 'post'];
    const target = fc.constantFrom(
      'dag',
      'dag_spec',
      'run',
      'run_logs',
      'step_log',
      'foreach_items',
      'foreach_item',
    );
    const read = fc
      .record({
        target,
        name: fc.constantFrom(...names),
        dagRunId: fc.constantFrom(...runIds),
        subRunId: fc.option(fc.constantFrom(...runIds), { nil: undefined }),
        stepName: fc.constantFrom(...steps),
        item: fc.constantFrom('q1', 'q2'),
        uriMode: fc.boolean(),
      })
      .map(({ target, name, dagRunId, subRunId, stepName, item, uriMode }): Read => {
        const args: Args = { target, name };
        if (target !== 'dag' && target !== 'dag_spec') {
          Object.assign(
            args,
            { dagRunId },
            subRunId === undefined || target === 'run_logs' ? {} : { subRunId },
          );
        }
        if (['step_log', 'foreach_items', 'foreach_item'].includes(target)) args.stepName = stepName;
        if (target === 'foreach_item') args.item = item;
        const uri = uriOf(args);
        return uriMode && uri !== undefined ? { kind: 'tool', args: { uri } } : { kind: 'tool', args };
      });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CALLERS), read, async (caller, generated) => {
        const mine = await answer(narrowed.get(caller)!, generated);
        assert.deepEqual(
          leaks(caller, generated, JSON.stringify(mine)).map((token) => token.what),
          [],
        );
        const hidden = named(generated).find((name) => !visibleTo(caller, name));
        if (hidden !== undefined && named(generated).length === 1) {
          const missing = await answer(narrowed.get(caller)!, asMissing(generated, hidden, MISSING_DAG));
          assert.deepEqual(normalised(mine, hidden, MISSING_DAG), normalised(missing, hidden, MISSING_DAG));
        }
      }),
      { numRuns: 150, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
    );
  });
});
