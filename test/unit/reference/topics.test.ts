import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CODES, READ_TARGETS } from '../../../src/core/contract.ts';
import { findReferenceTopic, REFERENCE_TOPICS } from '../../../src/reference/topics.ts';

const EXPECTED: ReadonlyArray<{ name: string; heading: string; mustContain: readonly string[] }> = [
  {
    name: 'authoring',
    heading: '# Dagu DAG authoring',
    mustContain: [
      'steps',
      'run:',
      'depends',
      'output',
      'env',
      'params',
      'dag.run',
      'call',
      'retry_policy',
      'continue_on',
      'preconditions',
      'timeout_sec',
      'schedule',
      'handler_on',
      'labels',
      'parallel',
      'foreach',
      'queue',
      'max_active_runs',
      'dag_spec',
      'errors',
    ],
  },
  {
    name: 'tools',
    heading: '# Dagu MCP tools',
    mustContain: ['dagu_read', 'dagu_change', 'dagu_execute', 'readOnlyHint', '/mcp'],
  },
  {
    name: 'read-tool',
    heading: '# dagu_read',
    mustContain: ['nextCursor', 'pagination', 'foreach', 'workbook', 'query', 'uri'],
  },
  {
    name: 'change-tool',
    heading: '# dagu_change',
    mustContain: ['not available', '/mcp', 'POST /api/v1/dags', 'PUT /api/v1/dags/{fileName}/spec'],
  },
  {
    name: 'execute-tool',
    heading: '# dagu_execute',
    mustContain: [
      'not available',
      '/mcp',
      'POST /api/v1/dags/{fileName}/start',
      '/stop',
      '/retry',
      '"target": "run"',
      'run_logs',
      'step_log',
    ],
  },
  {
    name: 'notifications',
    heading: '# Dagu MCP notifications',
    mustContain: ['no MCP notifications', 'status', 'fromDate', 'cursor', 'mail_on', 'handler_on'],
  },
];

const MIN_LINES = 40;
const MAX_LINES = 250;
const MIN_CHARS = 2000;

describe('reference topics', () => {
  it('lists the six contract topics in order', () => {
    assert.deepEqual(
      REFERENCE_TOPICS.map((topic) => topic.name),
      EXPECTED.map((topic) => topic.name),
    );
  });

  for (const expected of EXPECTED) {
    describe(expected.name, () => {
      const topic = findReferenceTopic(expected.name);

      it('is found by name with title and description', () => {
        assert.ok(topic, `topic ${expected.name} is missing`);
        assert.equal(topic.name, expected.name);
        assert.equal(`# ${topic.title}`, expected.heading);
        assert.ok(topic.description.length > 20);
      });

      it('starts with its heading', () => {
        assert.ok(topic);
        assert.equal(topic.text.split('\n', 1)[0], expected.heading);
      });

      it('contains the required strings', () => {
        assert.ok(topic);
        for (const needle of expected.mustContain) {
          assert.ok(topic.text.includes(needle), `${expected.name} lacks ${JSON.stringify(needle)}`);
        }
      });

      it('has a sane length', () => {
        assert.ok(topic);
        const lines = topic.text.split('\n').length;
        assert.ok(lines >= MIN_LINES && lines <= MAX_LINES, `${expected.name} has ${lines} lines`);
        assert.ok(topic.text.length >= MIN_CHARS, `${expected.name} has ${topic.text.length} characters`);
      });
    });
  }

  it('documents every read target and every error code in read-tool', () => {
    const text = findReferenceTopic('read-tool')?.text ?? '';
    for (const target of READ_TARGETS) assert.ok(text.includes(`\`${target}\``), `read-tool lacks ${target}`);
    for (const code of ERROR_CODES) assert.ok(text.includes(`\`${code}\``), `read-tool lacks ${code}`);
  });

  it('does not find unknown or differently cased names', () => {
    assert.equal(findReferenceTopic('apps'), undefined);
    assert.equal(findReferenceTopic('Authoring'), undefined);
    assert.equal(findReferenceTopic(''), undefined);
  });
});

/** Query parameter names the contract allows per target (`null`: the URI takes no query). */
const DAGS_PARAMS = ['page', 'perPage', 'name', 'labels', 'sort', 'order'];
const RUNS_PARAMS = ['name', 'dagRunId', 'status', 'fromDate', 'toDate', 'limit', 'cursor', 'labels'];
const WIKI_PARAMS = ['page', 'perPage', 'flat', 'sort', 'order', 'prefix'];
const RUN_LOGS_PARAMS = ['tail'];
const STEP_LOG_PARAMS = ['tail', 'head', 'offset', 'limit', 'stream'];
const FOREACH_ITEMS_PARAMS = ['parent', 'status', 'page', 'perPage'];

/** One path segment; placeholders such as `{name}` or `<id>` count as segments. */
const SEG = '[^/?#\\s]+';
const ROOT_RUN = `dagu://runs/${SEG}/${SEG}`;
const ANY_RUN = `${ROOT_RUN}(?:/sub/${SEG})?`;

/** The URI shapes of the contract's URI-mode table, with the target each resolves to. */
const SHAPES: ReadonlyArray<{ target: string; pattern: RegExp; params: readonly string[] | null }> = [
  { target: 'references', pattern: /^dagu:\/\/reference$/, params: null },
  { target: 'reference', pattern: new RegExp(`^dagu://reference/${SEG}$`), params: null },
  { target: 'dags', pattern: /^dagu:\/\/dags$/, params: DAGS_PARAMS },
  { target: 'dag_spec', pattern: new RegExp(`^dagu://dags/${SEG}/spec$`), params: null },
  { target: 'wiki', pattern: /^dagu:\/\/wiki$/, params: WIKI_PARAMS },
  { target: 'wiki', pattern: new RegExp(`^dagu://wiki/${SEG}$`), params: WIKI_PARAMS },
  { target: 'wiki_page', pattern: new RegExp(`^dagu://wiki/${SEG}(?:/${SEG})+$`), params: null },
  { target: 'runs', pattern: /^dagu:\/\/runs$/, params: RUNS_PARAMS },
  { target: 'run', pattern: new RegExp(`^${ANY_RUN}$`), params: null },
  { target: 'run_logs', pattern: new RegExp(`^${ROOT_RUN}/logs$`), params: RUN_LOGS_PARAMS },
  { target: 'step_log', pattern: new RegExp(`^${ANY_RUN}/steps/${SEG}/logs$`), params: STEP_LOG_PARAMS },
  {
    target: 'foreach_items',
    pattern: new RegExp(`^${ANY_RUN}/steps/${SEG}/foreach$`),
    params: FOREACH_ITEMS_PARAMS,
  },
  { target: 'foreach_item', pattern: new RegExp(`^${ANY_RUN}/steps/${SEG}/foreach/${SEG}$`), params: null },
  {
    target: 'step_log',
    pattern: new RegExp(`^${ANY_RUN}/steps/${SEG}/foreach/${SEG}/steps/${SEG}/logs$`),
    params: STEP_LOG_PARAMS,
  },
];

/** Every `dagu://` URI written in a text (the bare scheme in prose is skipped), without trailing punctuation. */
function urisIn(text: string): string[] {
  const found = text.match(/dagu:\/\/[^\s`"'()[\]|]+/g) ?? [];
  return found.map((uri) => uri.replace(/[.,;:]+$/, ''));
}

/** The problem with a documented URI, or `undefined` when it fits a contract shape. */
function uriProblem(uri: string): string | undefined {
  const queryAt = uri.indexOf('?');
  const path = queryAt === -1 ? uri : uri.slice(0, queryAt);
  const query = queryAt === -1 ? '' : uri.slice(queryAt + 1);
  if (path.includes('#')) return 'has a fragment';
  const shape = SHAPES.find((candidate) => candidate.pattern.test(path));
  if (!shape) return 'matches no contract URI shape';
  if (query === '') return undefined;
  if (shape.params === null) return `target ${shape.target} takes no query`;
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(query)) {
    if (!shape.params.includes(key)) return `unknown parameter ${key} for ${shape.target}`;
    if (value === '') return `empty parameter ${key}`;
    const repeatable = shape.target === 'runs' && key === 'status';
    if (seen.has(key) && !repeatable) return `repeated parameter ${key}`;
    seen.add(key);
  }
  return undefined;
}

describe('dagu:// URIs in the reference topics', () => {
  it('the shape check accepts contract shapes and rejects others', () => {
    assert.equal(uriProblem('dagu://runs/a/b/sub/c/steps/s/foreach/1/steps/t/logs?tail=5'), undefined);
    assert.equal(uriProblem('dagu://wiki/default/a/b'), undefined);
    assert.ok(uriProblem('dagu://runs/a/b/sub/c/logs'));
    assert.ok(uriProblem('dagu://dags/a'));
    assert.ok(uriProblem('dagu://jobs'));
    assert.ok(uriProblem('dagu://dags/a/spec?page=1'));
    assert.ok(uriProblem('dagu://runs?limit=1&limit=2'));
    assert.equal(uriProblem('dagu://runs?status=1&status=2'), undefined);
  });

  it('every topic mentions at least one dagu:// URI', () => {
    for (const topic of REFERENCE_TOPICS) assert.ok(urisIn(topic.text).length > 0, topic.name);
  });

  for (const topic of REFERENCE_TOPICS) {
    it(`${topic.name}: every URI parses into a contract shape`, () => {
      const problems = urisIn(topic.text)
        .map((uri) => ({ uri, problem: uriProblem(uri) }))
        .filter((entry) => entry.problem !== undefined);
      assert.deepEqual(problems, []);
    });
  }

  it('every reference URI names one of the six topics', () => {
    const names = new Set(REFERENCE_TOPICS.map((topic) => topic.name));
    for (const topic of REFERENCE_TOPICS) {
      for (const uri of urisIn(topic.text)) {
        const match = /^dagu:\/\/reference\/([^/?#\s]+)$/.exec(uri);
        if (match?.[1] && match[1] !== '{topic}' && match[1] !== '{name}') {
          assert.ok(names.has(match[1]), `${topic.name} links unknown topic ${uri}`);
        }
      }
    }
  });
});
