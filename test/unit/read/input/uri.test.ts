import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ReadTarget } from '../../../../src/core/contract.ts';
import { resourceLinkFor } from '../../../../src/mcp/links.ts';
import {
  describeResourceUri,
  parseResourceUri,
  pathEscape,
  percentDecode,
  queryEscape,
  resolveReadInput,
} from '../../../../src/read/input/index.ts';
import { URI_SHAPES } from '../../../../src/read/input/uri.ts';
import type { ReadFields } from '../../../../src/read/types.ts';
import {
  dagsSpecUri,
  dagsUri,
  foreachItemsUri,
  foreachItemUri,
  foreachStepLogUri,
  referenceUri,
  runLogsUri,
  runsUri,
  runUri,
  stepLogUri,
  stepLogUris,
  wikiPageUri,
  wikiUri,
} from '../../../../src/read/uri-shapes.ts';
import { assertError, type ExpectedError } from '../../../support/read-errors.ts';

type Expected = ExpectedError;

const invalidUri = (uri: string, target?: ReadTarget): Expected => ({
  code: 'invalid_resource_uri',
  field: 'uri',
  uri,
  ...(target === undefined ? {} : { target }),
});

/** Every URI shape of the contract: sample, target, decoded fields, resource link. */
interface ShapeCase {
  id: string;
  template: string;
  sample: string;
  target: ReadTarget;
  fields: ReadFields;
  link: [string, string];
  queryable: boolean;
}

const J = 'application/json';
const RUN = { name: 'nightly', dagRunId: 'r1' };
const SUB = { ...RUN, subRunId: 'c1' };
const SHAPES: ShapeCase[] = [
  {
    id: 'references',
    template: 'dagu://reference',
    sample: 'dagu://reference',
    target: 'references',
    fields: {},
    link: ['dagu_references', J],
    queryable: false,
  },
  {
    id: 'reference',
    template: 'dagu://reference/{topic}',
    sample: 'dagu://reference/authoring',
    target: 'reference',
    fields: { name: 'authoring' },
    link: ['dagu_reference', 'text/markdown'],
    queryable: false,
  },
  {
    id: 'dags',
    template: 'dagu://dags',
    sample: 'dagu://dags',
    target: 'dags',
    fields: {},
    link: ['dags', J],
    queryable: true,
  },
  {
    id: 'dag_spec',
    template: 'dagu://dags/{name}/spec',
    sample: 'dagu://dags/nightly-report/spec',
    target: 'dag_spec',
    fields: { name: 'nightly-report' },
    link: ['dag_spec', 'application/yaml'],
    queryable: false,
  },
  {
    id: 'runs',
    template: 'dagu://runs',
    sample: 'dagu://runs',
    target: 'runs',
    fields: {},
    link: ['dag_runs', J],
    queryable: true,
  },
  {
    id: 'run',
    template: 'dagu://runs/{name}/{dagRunId}',
    sample: 'dagu://runs/nightly/r1',
    target: 'run',
    fields: RUN,
    link: ['dag_run', J],
    queryable: false,
  },
  {
    id: 'run_logs',
    template: 'dagu://runs/{name}/{dagRunId}/logs',
    sample: 'dagu://runs/nightly/r1/logs',
    target: 'run_logs',
    fields: RUN,
    link: ['dag_run_logs', J],
    queryable: true,
  },
  {
    id: 'step_log',
    template: 'dagu://runs/{name}/{dagRunId}/steps/{stepName}/logs',
    sample: 'dagu://runs/nightly/r1/steps/build/logs',
    target: 'step_log',
    fields: { ...RUN, stepName: 'build' },
    link: ['dag_run_step_log', J],
    queryable: true,
  },
  {
    id: 'sub_run',
    template: 'dagu://runs/{name}/{dagRunId}/sub/{subRunId}',
    sample: 'dagu://runs/nightly/r1/sub/c1',
    target: 'run',
    fields: SUB,
    link: ['sub_dag_run', J],
    queryable: false,
  },
  {
    id: 'sub_step_log',
    template: 'dagu://runs/{name}/{dagRunId}/sub/{subRunId}/steps/{stepName}/logs',
    sample: 'dagu://runs/nightly/r1/sub/c1/steps/build/logs',
    target: 'step_log',
    fields: { ...SUB, stepName: 'build' },
    link: ['sub_dag_run_step_log', J],
    queryable: true,
  },
  {
    id: 'foreach_items',
    template: 'dagu://runs/{name}/{dagRunId}/steps/{stepName}/foreach',
    sample: 'dagu://runs/nightly/r1/steps/fan/foreach',
    target: 'foreach_items',
    fields: { ...RUN, stepName: 'fan' },
    link: ['dag_run_foreach_items', J],
    queryable: true,
  },
  {
    id: 'foreach_item',
    template: 'dagu://runs/{name}/{dagRunId}/steps/{stepName}/foreach/{item}',
    sample: 'dagu://runs/nightly/r1/steps/fan/foreach/3',
    target: 'foreach_item',
    fields: { ...RUN, stepName: 'fan', item: '3' },
    link: ['dag_run_foreach_item', J],
    queryable: false,
  },
  {
    id: 'foreach_step_log',
    template: 'dagu://runs/{name}/{dagRunId}/steps/{stepName}/foreach/{item}/steps/{bodyStepName}/logs',
    sample: 'dagu://runs/nightly/r1/steps/fan/foreach/2.inner.0/steps/body/logs',
    target: 'step_log',
    fields: { ...RUN, stepName: 'fan', item: '2.inner.0', bodyStepName: 'body' },
    link: ['dag_run_foreach_step_log', J],
    queryable: true,
  },
  {
    id: 'sub_foreach_items',
    template: 'dagu://runs/{name}/{dagRunId}/sub/{subRunId}/steps/{stepName}/foreach',
    sample: 'dagu://runs/nightly/r1/sub/c1/steps/fan/foreach',
    target: 'foreach_items',
    fields: { ...SUB, stepName: 'fan' },
    link: ['sub_dag_run_foreach_items', J],
    queryable: true,
  },
  {
    id: 'sub_foreach_item',
    template: 'dagu://runs/{name}/{dagRunId}/sub/{subRunId}/steps/{stepName}/foreach/{item}',
    sample: 'dagu://runs/nightly/r1/sub/c1/steps/fan/foreach/3',
    target: 'foreach_item',
    fields: { ...SUB, stepName: 'fan', item: '3' },
    link: ['sub_dag_run_foreach_item', J],
    queryable: false,
  },
  {
    id: 'sub_foreach_step_log',
    template:
      'dagu://runs/{name}/{dagRunId}/sub/{subRunId}/steps/{stepName}/foreach/{item}/steps/{bodyStepName}/logs',
    sample: 'dagu://runs/nightly/r1/sub/c1/steps/fan/foreach/3/steps/body/logs',
    target: 'step_log',
    fields: { ...SUB, stepName: 'fan', item: '3', bodyStepName: 'body' },
    link: ['sub_dag_run_foreach_step_log', J],
    queryable: true,
  },
  {
    id: 'wiki',
    template: 'dagu://wiki',
    sample: 'dagu://wiki',
    target: 'wiki',
    fields: { workspace: 'all' },
    link: ['wiki', J],
    queryable: true,
  },
  {
    id: 'wiki_workspace',
    template: 'dagu://wiki/{workspace}',
    sample: 'dagu://wiki/default',
    target: 'wiki',
    fields: { workspace: 'default' },
    link: ['wiki', J],
    queryable: true,
  },
  {
    id: 'wiki_page',
    template: 'dagu://wiki/{workspace}/{path}',
    sample: 'dagu://wiki/default/guides/deploy',
    target: 'wiki_page',
    fields: { workspace: 'default', path: 'guides/deploy' },
    link: ['wiki_page', 'text/markdown'],
    queryable: false,
  },
];

/** The fields a URI itself gives: its path values. `dagu://wiki`'s `workspace: all` is a default. */
function suppliedBy(shape: ShapeCase): string[] {
  return shape.id === 'wiki' ? [] : Object.keys(shape.fields);
}

// A valid query for each query-taking shape's target.
const SAMPLE_QUERY: Partial<Record<ReadTarget, string>> = {
  dags: 'perPage=20&name=nightly',
  runs: 'name=nightly-report&limit=20',
  wiki: 'flat=true',
  run_logs: 'tail=100',
  step_log: 'tail=50&stream=stderr',
  foreach_items: 'status=failed&page=1',
};

describe('shape table', () => {
  test('one row per contract URI shape, with the contract templates', () => {
    assert.deepEqual(
      URI_SHAPES.map((shape) => [shape.id, shape.template]),
      SHAPES.map((shape) => [shape.id, shape.template]),
    );
  });
});

describe('every URI shape resolves to its target, fields, canonical URI and link', () => {
  for (const shape of SHAPES) {
    test(`${shape.sample} → ${shape.target}`, () => {
      const resolved = resolveReadInput({ uri: shape.sample });
      assert.deepEqual(resolved, {
        mode: 'uri',
        target: shape.target,
        fields: shape.fields,
        uri: shape.sample,
        supplied: suppliedBy(shape),
      });
      const parsed = parseResourceUri(shape.sample);
      assert.equal(parsed.shape.id, shape.id);
      assert.deepEqual(describeResourceUri(shape.sample), { name: shape.link[0], mimeType: shape.link[1] });
      assert.deepEqual(resourceLinkFor(shape.sample), {
        type: 'resource_link',
        uri: shape.sample,
        name: shape.link[0],
        mimeType: shape.link[1],
      });
    });

    if (shape.queryable) {
      const query = SAMPLE_QUERY[shape.target]!;
      test(`${shape.sample}?${query} keeps its target and echoes the query`, () => {
        const uri = `${shape.sample}?${query}`;
        const resolved = resolveReadInput({ uri });
        assert.equal(resolved.target, shape.target);
        assert.equal(resolved.uri, uri);
        assert.equal(resolved.query?.raw, query);
        assert.deepEqual(resolved.fields, { ...shape.fields, query });
        assert.deepEqual(resolved.supplied, [...suppliedBy(shape), 'query']);
        assert.deepEqual(describeResourceUri(uri), { name: shape.link[0], mimeType: shape.link[1] });
      });
    } else {
      for (const query of ['tail=100', 'x', '&']) {
        test(`${shape.sample}?${query} is rejected: singular resources take no query`, () => {
          const uri = `${shape.sample}?${query}`;
          const error = assertError(() => resolveReadInput({ uri }), invalidUri(uri, shape.target));
          assert.match(error.message, /do not accept query parameters/);
        });
      }
    }
  }
});

const EXTENDS_TO: Record<string, string> = {
  references: 'reference',
  foreach_items: 'foreach_item',
  sub_foreach_items: 'sub_foreach_item',
  wiki: 'wiki_workspace',
  wiki_workspace: 'wiki_page',
  wiki_page: 'wiki_page',
};

describe('one more segment after a shape', () => {
  for (const shape of SHAPES) {
    const next = EXTENDS_TO[shape.id];
    if (next === undefined) continue;
    test(`${shape.id} + /extra is ${next}`, () => {
      assert.equal(parseResourceUri(`${shape.sample}/extra`).shape.id, next);
    });
  }
});

describe('malformed variants of every shape', () => {
  for (const shape of SHAPES) {
    const base = shape.sample;
    const tail = base.slice('dagu://'.length);
    const hasPath = tail.includes('/');
    const variants: Array<[string, string]> = [
      ['wrong scheme http', `http://${tail}`],
      ['wrong scheme dagux', `dagux://${tail}`],
      ['opaque form', `dagu:${tail}`],
      ['single slash', `dagu:/${tail}`],
      ['fragment', `${base}#top`],
      ['empty fragment', `${base}#`],
      ['trailing slash', `${base}/`],
      ['doubled slash at the end', `${base}//x`],
      ['dot segment', `${base}/.`],
      ['dot-dot segment', `${base}/..`],
      ['escaped dot-dot segment', `${base}/%2E%2e`],
      ['bad escape', `${base}/%zz`],
      ['control character', `${base}/a%00b`.replace('%00', '\u0001')],
    ];
    if (hasPath) {
      const [family, ...segments] = tail.split('/');
      variants.push(
        ['bad escape in first value', `dagu://${family}/%zz${segments.join('/')}`],
        ['truncated escape in first value', `dagu://${family}/${segments[0]}%4`],
        ['invalid UTF-8 escape', `dagu://${family}/%FF${segments.join('/')}`],
        ['empty inner segment', `dagu://${family}/${segments[0]}//${segments.slice(1).join('/')}`],
        ['leading empty segment', `dagu://${family}//${segments.join('/')}`],
        ['dot-dot inside', `dagu://${family}/${segments[0]}/../${segments.slice(1).join('/')}`],
      );
    }
    // One more segment turns these into the next shape (a topic, an item, a workspace, a deeper page).
    if (!EXTENDS_TO[shape.id]) variants.push(['extra segment', `${base}/extra`]);
    for (const [label, uri] of variants) {
      test(`${shape.id}: ${label} is invalid_resource_uri`, () => {
        assertError(() => resolveReadInput({ uri }), invalidUri(uri));
      });
    }
  }
});

describe('other malformed and unsupported URIs', () => {
  const invalid = [
    'reference/authoring',
    'dagu://',
    'dagu:///dags',
    'dagu://?x=1',
    'dagu://user@dags',
    'dagu://dags:80',
    'dagu://runs/a/b/c',
    'dagu://runs/a/b/steps/c',
    'dagu://runs/a/b/steps/c/log',
    'dagu://runs/a/b/sub/c/logs',
    'dagu://runs/a/b/sub/c/steps/d',
    'dagu://runs/a/b/steps/c/foreach/1/steps/d',
    'dagu://runs/a/b/steps/c/foreach/1/logs',
    'dagu://runs/a',
    'dagu://dags/a',
    'dagu://dags/a/spec/x',
    'dagu://dags/a/specs',
    'dagu://reference/a/b',
    'dagu://foo/%zz',
    'dagu://runs/%C3%28/1',
  ];
  for (const uri of invalid) {
    test(`${uri} is invalid_resource_uri`, () => {
      assertError(() => resolveReadInput({ uri }), invalidUri(uri));
    });
  }

  for (const uri of [
    'dagu://foo',
    'dagu://Dags',
    'dagu://REFERENCE/authoring',
    'dagu://dag/x/spec',
    'dagu://workbook/x',
    'dagu://run/a/b',
    // design §1: docs/doc/doc_search are deprecated target values, never a URI family.
    'dagu://docs',
    'dagu://docs/default',
    'dagu://docs/default/guides%2Fdeploy',
    'dagu://docs?flat=true',
    'dagu://doc/default/a',
    'dagu://doc_search',
  ]) {
    test(`${uri} is unsupported_resource`, () => {
      assertError(() => resolveReadInput({ uri }), { code: 'unsupported_resource', field: 'uri', uri });
    });
  }

  const wiki: Array<[string, ReadTarget]> = [
    ['dagu://wiki/all', 'wiki'],
    ['dagu://wiki/all?flat=true', 'wiki'],
    ['dagu://wiki/all/guides', 'wiki_page'],
    ['dagu://wiki/default/.hidden', 'wiki_page'],
    ['dagu://wiki/default/con', 'wiki_page'],
    ['dagu://wiki/default/guides/AUX.md', 'wiki_page'],
    ['dagu://wiki/default/notes%20', 'wiki_page'],
    ['dagu://wiki/default/a*b', 'wiki_page'],
    ['dagu://wiki/default/guides%2F', 'wiki_page'],
    ['dagu://wiki/default/a%2F%2Fb', 'wiki_page'],
    [`dagu://wiki/default/${'x'.repeat(253)}`, 'wiki_page'],
    ['dagu://wiki/default/guides?flat=true', 'wiki_page'],
  ];
  for (const [uri, target] of wiki) {
    test(`${uri.slice(0, 60)} is invalid for ${target}`, () => {
      assertError(() => resolveReadInput({ uri }), invalidUri(uri, target));
    });
  }

  test('the error echoes the trimmed uri', () => {
    assertError(() => resolveReadInput({ uri: '  dagu://runs/a  ' }), invalidUri('dagu://runs/a'));
    assertError(() => resolveReadInput({ uri: '\tdagu://nope\n' }), {
      code: 'unsupported_resource',
      field: 'uri',
      uri: 'dagu://nope',
    });
  });

  test('describeResourceUri gives undefined for anything that is not a shape', () => {
    for (const uri of [
      'dagu://foo',
      'http://dags',
      'dagu://runs/a',
      'dagu://dags/a/spec#x',
      'dagu://runs/%zz/1',
    ]) {
      assert.equal(describeResourceUri(uri), undefined, uri);
      // The MCP layer only links URIs the read service returned: anything else is a gateway bug.
      assert.throws(() => resourceLinkFor(uri), /no resource-link shape/, uri);
    }
  });

  test('a plain URI is named as the full parse names it (the same URI with DAGU:// goes through it)', () => {
    const variants = (uri: string) => [
      uri,
      `${uri}/`,
      `${uri}/x`,
      `${uri}//x`,
      `${uri}/.`,
      `${uri}/..`,
      `${uri}/.x`,
      `${uri}/a:b@c$&+=`,
      uri.replace('dagu://', 'dagu:///'),
      uri.replace(/\/[^/]*$/, ''),
      uri.replace(/\/[^/]*$/, '/..'),
      uri.replace(/\/[^/]*$/, '/.'),
      uri.replace('logs', 'Logs'),
      uri.replace('steps', 'step'),
    ];
    const uris = [
      ...SHAPES.flatMap((shape) => variants(shape.sample)),
      'dagu://',
      'dagu:///',
      'dagu://runs',
      'dagu://ru@ns/a/b',
      'dagu://runs:1/a/b',
      'dagu://nope/a',
      'dagu://Runs/a/b',
      `dagu://runs${'/a'.repeat(20)}`,
      `dagu://wiki/default${'/p'.repeat(20)}`,
    ];
    for (const uri of uris) {
      assert.deepEqual(describeResourceUri(uri), describeResourceUri(`DAGU${uri.slice(4)}`), uri);
    }
  });
});

describe('non-canonical input is answered with the canonical URI', () => {
  const cases: Array<[string, string, ReadTarget, ReadFields]> = [
    ['DAGU://dags/a/spec', 'dagu://dags/a/spec', 'dag_spec', { name: 'a' }],
    ['Dagu://reference', 'dagu://reference', 'references', {}],
    [
      'dagu://dags/mcp%2Eread-contract/spec',
      'dagu://dags/mcp.read-contract/spec',
      'dag_spec',
      { name: 'mcp.read-contract' },
    ],
    ['dagu://runs/a%3ab/1', 'dagu://runs/a:b/1', 'run', { name: 'a:b', dagRunId: '1' }],
    ['dagu://runs/x/%41', 'dagu://runs/x/A', 'run', { name: 'x', dagRunId: 'A' }],
    ['dagu://runs/demo dag/1', 'dagu://runs/demo%20dag/1', 'run', { name: 'demo dag', dagRunId: '1' }],
    ['dagu://runs/é/1', 'dagu://runs/%C3%A9/1', 'run', { name: 'é', dagRunId: '1' }],
    ['dagu://runs/a(1)/b!', 'dagu://runs/a%281%29/b%21', 'run', { name: 'a(1)', dagRunId: 'b!' }],
    [
      'dagu://wiki/default/guides%2Fdeploy',
      'dagu://wiki/default/guides/deploy',
      'wiki_page',
      { workspace: 'default', path: 'guides/deploy' },
    ],
    [
      'dagu://wiki/my%20team/Team%20Notes/v1.2',
      'dagu://wiki/my%20team/Team%20Notes/v1.2',
      'wiki_page',
      { workspace: 'my team', path: 'Team Notes/v1.2' },
    ],
    [
      'dagu://runs/n/1/steps/logs/logs',
      'dagu://runs/n/1/steps/logs/logs',
      'step_log',
      { name: 'n', dagRunId: '1', stepName: 'logs' },
    ],
    ['dagu://runs/sub/sub', 'dagu://runs/sub/sub', 'run', { name: 'sub', dagRunId: 'sub' }],
    [
      'dagu://runs/steps/foreach/sub/steps',
      'dagu://runs/steps/foreach/sub/steps',
      'run',
      { name: 'steps', dagRunId: 'foreach', subRunId: 'steps' },
    ],
    [
      'dagu://runs/demo%20dag/run%2F1/steps/build%2Foutput/logs',
      'dagu://runs/demo%20dag/run%2F1/steps/build%2Foutput/logs',
      'step_log',
      { name: 'demo dag', dagRunId: 'run/1', stepName: 'build/output' },
    ],
    ['dagu://dags?', 'dagu://dags', 'dags', {}],
  ];
  for (const [input, canonical, target, fields] of cases) {
    test(`${input} → ${canonical}`, () => {
      assert.deepEqual(resolveReadInput({ uri: input }), {
        mode: 'uri',
        target,
        fields,
        uri: canonical,
        supplied: Object.keys(fields),
      });
    });
  }

  test('the query is echoed exactly as given, including its escapes', () => {
    const uri = 'dagu://runs/a/1/logs?tail=%31%30';
    const resolved = resolveReadInput({ uri: `DAGU://runs/%61/1/logs?tail=%31%30` });
    assert.equal(resolved.uri, uri);
    assert.deepEqual(resolved.query?.params, [['tail', '10']]);
  });
});

describe('builders', () => {
  const run = { name: 'nightly', dagRunId: 'r1' };
  const sub = { ...run, subRunId: 'c1' };
  const cases: Array<[string, string]> = [
    [referenceUri(), 'dagu://reference'],
    [referenceUri('authoring'), 'dagu://reference/authoring'],
    [dagsUri(), 'dagu://dags'],
    [dagsUri('page=1'), 'dagu://dags?page=1'],
    [dagsSpecUri('mcp.read-contract'), 'dagu://dags/mcp.read-contract/spec'],
    [runsUri(), 'dagu://runs'],
    [runsUri('status=1&status=2'), 'dagu://runs?status=1&status=2'],
    [runUri('nightly', 'r1'), 'dagu://runs/nightly/r1'],
    [runUri('nightly', 'r1', ''), 'dagu://runs/nightly/r1'],
    [runUri('nightly', 'r1', 'c1'), 'dagu://runs/nightly/r1/sub/c1'],
    [
      runLogsUri('nightly-report', '20260701T010000Z', 'tail=100'),
      'dagu://runs/nightly-report/20260701T010000Z/logs?tail=100',
    ],
    [
      stepLogUri({ name: 'demo dag', dagRunId: 'run/1' }, 'build/output'),
      'dagu://runs/demo%20dag/run%2F1/steps/build%2Foutput/logs',
    ],
    [stepLogUri(sub, 'build', 'head=5'), 'dagu://runs/nightly/r1/sub/c1/steps/build/logs?head=5'],
    [
      stepLogUris({ name: 'demo dag', dagRunId: 'run/1' })('build/output'),
      'dagu://runs/demo%20dag/run%2F1/steps/build%2Foutput/logs',
    ],
    [stepLogUris(sub)('build step'), 'dagu://runs/nightly/r1/sub/c1/steps/build%20step/logs'],
    [stepLogUris({ ...run, subRunId: '' })('s'), 'dagu://runs/nightly/r1/steps/s/logs'],
    [foreachItemsUri(run, 'fan'), 'dagu://runs/nightly/r1/steps/fan/foreach'],
    [foreachItemsUri(sub, 'fan', 'page=2'), 'dagu://runs/nightly/r1/sub/c1/steps/fan/foreach?page=2'],
    [foreachItemUri(run, 'fan', '2.inner.0'), 'dagu://runs/nightly/r1/steps/fan/foreach/2.inner.0'],
    [foreachItemUri(sub, 'fan', '3'), 'dagu://runs/nightly/r1/sub/c1/steps/fan/foreach/3'],
    [
      foreachStepLogUri(run, 'fan', '3', 'body'),
      'dagu://runs/nightly/r1/steps/fan/foreach/3/steps/body/logs',
    ],
    [
      foreachStepLogUri(sub, 'fan', '3', 'body step', 'tail=1'),
      'dagu://runs/nightly/r1/sub/c1/steps/fan/foreach/3/steps/body%20step/logs?tail=1',
    ],
    [wikiUri(), 'dagu://wiki'],
    [wikiUri('all'), 'dagu://wiki'],
    [wikiUri('all', 'flat=true'), 'dagu://wiki?flat=true'],
    [wikiUri('default'), 'dagu://wiki/default'],
    [wikiPageUri('default', 'guides/deploy'), 'dagu://wiki/default/guides/deploy'],
    [wikiPageUri('my team', 'Team Notes/v1.2'), 'dagu://wiki/my%20team/Team%20Notes/v1.2'],
  ];
  for (const [built, expected] of cases) {
    test(`builds ${expected}`, () => assert.equal(built, expected));
  }
});

describe('escaping round-trips with awkward values', () => {
  const AWKWARD = [
    'demo dag',
    'run/1',
    'a?b',
    'a#b',
    '100%',
    '%2F literal',
    'é-ü-中文-🚀',
    "build (prod): a/b$&+=@!*~' é",
    '..x',
    '.hidden',
    'tab\tname',
    'semi;colon,comma',
    // As long as a name or run id may be (FIELD_MAX_LENGTH), in every segment at once.
    'x'.repeat(1024),
  ];
  const runShapes = SHAPES.filter((shape) => shape.target !== 'wiki' && shape.target !== 'wiki_page');
  for (const value of AWKWARD) {
    const label = JSON.stringify(value.length > 40 ? `${value.slice(0, 20)}…(${value.length})` : value);
    for (const shape of runShapes) {
      const keys = Object.keys(shape.fields) as Array<keyof ReadFields>;
      if (keys.length === 0) continue;
      test(`${shape.id} with every value ${label}`, () => {
        const fields = Object.fromEntries(keys.map((key) => [key, value])) as ReadFields;
        const built = buildFor(shape.id, fields);
        assert.ok(built.startsWith('dagu://'));
        const resolved = resolveReadInput({ uri: built });
        assert.equal(resolved.target, shape.target);
        assert.deepEqual(resolved.fields, fields);
        assert.equal(resolved.uri, built);
        assert.deepEqual(describeResourceUri(built), { name: shape.link[0], mimeType: shape.link[1] });
      });
    }
    test(`wiki workspace ${label}`, () => {
      if (value === 'all') return;
      const built = wikiUri(value);
      assert.deepEqual(resolveReadInput({ uri: built }).fields, { workspace: value });
      const page = wikiPageUri(value, 'Team Notes/v1.2/_draft-1');
      assert.deepEqual(resolveReadInput({ uri: page }).fields, {
        workspace: value,
        path: 'Team Notes/v1.2/_draft-1',
      });
    });
  }

  test('a value of . or .. cannot be addressed: its URI is rejected, never normalised', () => {
    for (const value of ['.', '..']) {
      for (const uri of [`dagu://runs/${value}/1`, `dagu://runs/n/${value}`, `dagu://dags/${value}/spec`]) {
        assertError(() => resolveReadInput({ uri }), invalidUri(uri));
      }
    }
  });

  test('a name at its 1024-character cap round-trips quickly', () => {
    const name = 'é'.repeat(1024);
    const started = performance.now();
    for (let i = 0; i < 100; i++) {
      const uri = dagsSpecUri(name);
      assert.equal(resolveReadInput({ uri }).fields.name, name);
    }
    assert.ok(performance.now() - started < 2000);
  });
});

describe('builders never emit a . or .. segment', () => {
  const run = { name: 'nightly', dagRunId: 'r1' };
  const sub = { ...run, subRunId: 'c1' };
  // Every builder, once per value it puts into a path segment.
  const builders: Array<[string, (value: string) => string]> = [
    ['referenceUri topic', (v) => referenceUri(v)],
    ['dagsSpecUri name', (v) => dagsSpecUri(v)],
    ['runUri name', (v) => runUri(v, 'r1')],
    ['runUri dagRunId', (v) => runUri('n', v)],
    ['runUri subRunId', (v) => runUri('n', 'r1', v)],
    ['runLogsUri name', (v) => runLogsUri(v, 'r1', 'tail=1')],
    ['runLogsUri dagRunId', (v) => runLogsUri('n', v)],
    ['stepLogUri name', (v) => stepLogUri({ ...run, name: v }, 's')],
    ['stepLogUri dagRunId', (v) => stepLogUri({ ...run, dagRunId: v }, 's')],
    ['stepLogUri subRunId', (v) => stepLogUri({ ...run, subRunId: v }, 's')],
    ['stepLogUri stepName', (v) => stepLogUri(sub, v, 'tail=1')],
    ['stepLogUris name', (v) => stepLogUris({ ...run, name: v })('s')],
    ['stepLogUris subRunId', (v) => stepLogUris({ ...run, subRunId: v })('s')],
    ['stepLogUris stepName', (v) => stepLogUris(sub)(v)],
    ['foreachItemsUri name', (v) => foreachItemsUri({ ...run, name: v }, 's')],
    ['foreachItemsUri dagRunId', (v) => foreachItemsUri({ ...sub, dagRunId: v }, 's')],
    ['foreachItemsUri subRunId', (v) => foreachItemsUri({ ...run, subRunId: v }, 's')],
    ['foreachItemsUri stepName', (v) => foreachItemsUri(run, v, 'page=1')],
    ['foreachItemUri name', (v) => foreachItemUri({ ...run, name: v }, 's', '0')],
    ['foreachItemUri dagRunId', (v) => foreachItemUri({ ...run, dagRunId: v }, 's', '0')],
    ['foreachItemUri subRunId', (v) => foreachItemUri({ ...run, subRunId: v }, 's', '0')],
    ['foreachItemUri stepName', (v) => foreachItemUri(sub, v, '0')],
    ['foreachItemUri item', (v) => foreachItemUri(run, 's', v)],
    ['foreachStepLogUri name', (v) => foreachStepLogUri({ ...run, name: v }, 's', '0', 'b')],
    ['foreachStepLogUri dagRunId', (v) => foreachStepLogUri({ ...run, dagRunId: v }, 's', '0', 'b')],
    ['foreachStepLogUri subRunId', (v) => foreachStepLogUri({ ...run, subRunId: v }, 's', '0', 'b')],
    ['foreachStepLogUri stepName', (v) => foreachStepLogUri(sub, v, '0', 'b')],
    ['foreachStepLogUri item', (v) => foreachStepLogUri(run, 's', v, 'b')],
    ['foreachStepLogUri bodyStepName', (v) => foreachStepLogUri(sub, 's', '0', v, 'tail=1')],
    ['wikiUri workspace', (v) => wikiUri(v)],
    ['wikiUri workspace + query', (v) => wikiUri(v, 'flat=true')],
    ['wikiPageUri workspace', (v) => wikiPageUri(v, 'guides/deploy')],
    ['wikiPageUri path', (v) => wikiPageUri('default', v)],
    ['wikiPageUri path, first segment', (v) => wikiPageUri('default', `${v}/deploy`)],
    ['wikiPageUri path, inner segment', (v) => wikiPageUri('default', `guides/${v}/deploy`)],
    ['wikiPageUri path, last segment', (v) => wikiPageUri('default', `guides/${v}`)],
  ];
  const hasDotSegment = (uri: string) =>
    uri
      .slice('dagu://'.length)
      .split('?')[0]!
      .split('/')
      .some((part) => part === '.' || part === '..');

  for (const [label, build] of builders) {
    for (const value of ['.', '..']) {
      test(`${label} ${JSON.stringify(value)} throws instead of emitting it`, () => {
        assert.throws(() => build(value), RangeError);
      });
    }
    test(`${label}: near-dot values are ordinary segments`, () => {
      for (const value of ['...', '.x', '..x', 'x.', 'x..', '_.']) {
        const uri = build(value);
        assert.equal(hasDotSegment(uri), false, uri);
        // A Wiki page path segment must not start or end with a dot at all (page-path.ts).
        if (!label.startsWith('wikiPageUri path')) assert.equal(resolveReadInput({ uri }).uri, uri);
      }
    });
  }

  test('the builders without value segments never hold one', () => {
    for (const uri of [referenceUri(), dagsUri(), dagsUri('name=..'), runsUri(), runsUri('name=.')]) {
      assert.equal(hasDotSegment(uri), false, uri);
    }
  });
});

function buildFor(id: string, f: ReadFields): string {
  const run = { name: f.name!, dagRunId: f.dagRunId!, subRunId: f.subRunId };
  switch (id) {
    case 'reference':
      return referenceUri(f.name!);
    case 'dag_spec':
      return dagsSpecUri(f.name!);
    case 'run':
    case 'sub_run':
      return runUri(f.name!, f.dagRunId!, f.subRunId);
    case 'run_logs':
      return runLogsUri(f.name!, f.dagRunId!);
    case 'step_log':
    case 'sub_step_log':
      return stepLogUri(run, f.stepName!);
    case 'foreach_items':
    case 'sub_foreach_items':
      return foreachItemsUri(run, f.stepName!);
    case 'foreach_item':
    case 'sub_foreach_item':
      return foreachItemUri(run, f.stepName!, f.item!);
    case 'foreach_step_log':
    case 'sub_foreach_step_log':
      return foreachStepLogUri(run, f.stepName!, f.item!, f.bodyStepName!);
    default:
      throw new Error(`no builder for ${id}`);
  }
}

describe('Go-compatible percent-encoding', () => {
  test('pathEscape matches url.PathEscape on the notes vector', () => {
    assert.equal(
      pathEscape("build (prod): a/b$&+=@!*~' é"),
      'build%20%28prod%29:%20a%2Fb$&+=@%21%2A~%27%20%C3%A9',
    );
  });

  const PATH_SAFE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~$&+:=@');
  for (let code = 0; code < 128; code++) {
    const ch = String.fromCharCode(code);
    const expected = PATH_SAFE.has(ch) ? ch : `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
    test(`pathEscape byte 0x${code.toString(16).padStart(2, '0')} → ${expected}`, () => {
      assert.equal(pathEscape(ch), expected);
      assert.equal(percentDecode(expected, false), ch);
    });
  }

  test('multi-byte characters become uppercase UTF-8 escapes', () => {
    assert.equal(pathEscape('é'), '%C3%A9');
    assert.equal(pathEscape('🚀'), '%F0%9F%9A%80');
    assert.equal(pathEscape('中'), '%E4%B8%AD');
  });

  test('queryEscape matches url.QueryEscape', () => {
    assert.equal(queryEscape('Team Notes/v1'), 'Team+Notes%2Fv1');
    assert.equal(queryEscape("$&+:=@!*'()"), '%24%26%2B%3A%3D%40%21%2A%27%28%29');
    assert.equal(queryEscape('a-b_c.d~e'), 'a-b_c.d~e');
  });

  test('percentDecode is strict', () => {
    assert.equal(percentDecode('a%2Fb', false), 'a/b');
    assert.equal(percentDecode('a+b', false), 'a+b');
    assert.equal(percentDecode('a+b', true), 'a b');
    assert.equal(percentDecode('%e2%9c%93', false), '✓');
    for (const bad of ['%', '%4', '%zz', '%G0', 'a%', '%FF', '%C3', '%C3%28', '%ED%A0%80']) {
      assert.equal(percentDecode(bad, false), undefined, bad);
    }
  });
});
