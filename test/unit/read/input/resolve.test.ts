import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEPRECATED_TARGET_ALIASES,
  READ_INPUT_FIELDS,
  READ_TARGETS,
  type ReadTarget,
  TARGET_FIELDS,
  type TargetField,
} from '../../../../src/core/contract.ts';
import { ReadError, type ToolErrorObject } from '../../../../src/read/errors.ts';
import { FIELD_RULES, resolveReadInput, suppliedTarget } from '../../../../src/read/input/index.ts';
import { assertError as assertErrorOf, type ExpectedError, errorOf } from '../../../support/read-errors.ts';

type Expected = ExpectedError;

const assertError = (raw: unknown, expected: Expected): ToolErrorObject =>
  assertErrorOf(() => resolveReadInput(raw), expected);

const invalid = (field?: string, target?: string): Expected => ({
  code: 'invalid_tool_input',
  ...(field === undefined ? {} : { field }),
  ...(target === undefined ? {} : { target }),
});

// Smallest valid input per target.
const BASE: Record<ReadTarget, Record<string, string>> = {
  references: {},
  reference: {},
  dags: {},
  dag: { name: 'nightly' },
  dag_spec: { name: 'nightly' },
  dag_search: { search: 'deploy' },
  wiki: {},
  wiki_page: { workspace: 'default', path: 'guides/deploy' },
  wiki_search: { search: 'deploy' },
  workbook: { path: '/data/book.xlsx' },
  runs: {},
  run: { name: 'nightly', dagRunId: 'r1' },
  run_logs: { name: 'nightly', dagRunId: 'r1' },
  step_log: { name: 'nightly', dagRunId: 'r1', stepName: 'build' },
  foreach_items: { name: 'nightly', dagRunId: 'r1', stepName: 'fan' },
  foreach_item: { name: 'nightly', dagRunId: 'r1', stepName: 'fan', item: '3' },
};

const QUERY: Partial<Record<ReadTarget, string>> = {
  dags: 'page=1',
  runs: 'limit=5',
  wiki: 'flat=true',
  run_logs: 'tail=100',
  step_log: 'tail=10',
  foreach_items: 'page=1',
};

function sample(target: ReadTarget, field: TargetField): string | number {
  switch (field) {
    case 'limit':
      return 10;
    case 'query':
      return QUERY[target] ?? 'page=1';
    case 'path':
      return target === 'workbook' ? '/data/book.xlsx' : 'guides/deploy';
    default:
      return {
        name: 'nightly',
        dagRunId: 'r1',
        subRunId: 'c1',
        stepName: 'build',
        item: '3',
        bodyStepName: 'body',
        workspace: 'default',
        password: 'pw',
        search: 'deploy',
        prefix: 'guides',
        cursor: 'abc',
      }[field];
  }
}

describe('every target × every field: required, optional, forbidden', () => {
  for (const target of READ_TARGETS) {
    test(`${target}: the smallest valid input resolves`, () => {
      const resolved = resolveReadInput({ target, ...BASE[target] });
      assert.equal(resolved.mode, 'target');
      assert.equal(resolved.target, target);
    });
    for (const field of TARGET_FIELDS) {
      const rule = FIELD_RULES[target][field];
      if (rule === 'forbidden') {
        test(`${target} × ${field}: forbidden`, () => {
          const error = assertError(
            { target, ...BASE[target], [field]: sample(target, field) },
            invalid(field, target),
          );
          assert.equal(error.message, `The ${field} field is not allowed for target ${target}.`);
        });
        if (field !== 'limit' && field !== 'password') {
          test(`${target} × ${field}: forbidden but blank after trimming is absent`, () => {
            assert.equal(resolveReadInput({ target, ...BASE[target], [field]: '  \t ' }).target, target);
          });
        }
      } else if (rule === 'required') {
        const without = Object.fromEntries(Object.entries(BASE[target]).filter(([key]) => key !== field));
        test(`${target} × ${field}: required (absent, blank, null)`, () => {
          for (const input of [without, { ...without, [field]: '   ' }, { ...without, [field]: null }]) {
            const error = assertError({ target, ...input }, invalid(field, target));
            assert.equal(error.message, `The ${field} field is required for target ${target}.`);
          }
        });
      } else {
        test(`${target} × ${field}: optional`, () => {
          const extra: Record<string, string | number> = { [field]: sample(target, field) };
          // item and bodyStepName come together for step_log.
          if (target === 'step_log' && field === 'item') extra.bodyStepName = 'body';
          if (target === 'step_log' && field === 'bodyStepName') extra.item = '3';
          const resolved = resolveReadInput({ target, ...BASE[target], ...extra });
          assert.equal(resolved.fields[field], sample(target, field));
        });
      }
    }
  }

  test('step_log: item requires bodyStepName and bodyStepName requires item', () => {
    const base = { target: 'step_log', ...BASE.step_log };
    let error = assertError({ ...base, item: '3' }, invalid('bodyStepName', 'step_log'));
    assert.equal(error.message, 'The bodyStepName field is required with item for target step_log.');
    error = assertError({ ...base, bodyStepName: 'body' }, invalid('item', 'step_log'));
    assert.equal(error.message, 'The item field is required with bodyStepName for target step_log.');
  });
});

describe('target mode output uri (the contract "Output uri" column)', () => {
  const cases: Array<[string, Record<string, unknown>, string | undefined]> = [
    ['references', { target: 'references' }, undefined],
    ['reference default', { target: 'reference' }, 'dagu://reference/authoring'],
    ['reference topic', { target: 'reference', name: 'read tool' }, 'dagu://reference/read%20tool'],
    ['dags', { target: 'dags', query: 'page=1' }, undefined],
    ['dag', { target: 'dag', name: 'nightly' }, undefined],
    ['dag_spec', { target: 'dag_spec', name: 'nightly-report' }, 'dagu://dags/nightly-report/spec'],
    ['dag_search', { target: 'dag_search', search: 'x' }, undefined],
    ['wiki all', { target: 'wiki' }, 'dagu://wiki'],
    ['wiki all explicit', { target: 'wiki', workspace: 'all', query: 'flat=true' }, 'dagu://wiki?flat=true'],
    ['wiki workspace', { target: 'wiki', workspace: 'default' }, 'dagu://wiki/default'],
    [
      'wiki prefix field',
      { target: 'wiki', workspace: 'ops', prefix: 'Team Notes' },
      'dagu://wiki/ops?prefix=Team+Notes',
    ],
    [
      'wiki query + prefix',
      { target: 'wiki', query: 'flat=true', prefix: 'a/b' },
      'dagu://wiki?flat=true&prefix=a%2Fb',
    ],
    [
      'wiki_page',
      { target: 'wiki_page', workspace: 'default', path: 'guides/deploy' },
      'dagu://wiki/default/guides/deploy',
    ],
    ['wiki_search', { target: 'wiki_search', search: 'x', prefix: 'guides' }, undefined],
    ['workbook', { target: 'workbook', path: '/data/b.xlsx' }, undefined],
    ['runs', { target: 'runs', query: 'status=1&status=2' }, undefined],
    ['run', { target: 'run', name: 'n', dagRunId: 'latest' }, 'dagu://runs/n/latest'],
    ['run sub', { target: 'run', name: 'n', dagRunId: '1', subRunId: 'c/1' }, 'dagu://runs/n/1/sub/c%2F1'],
    [
      'run_logs',
      { target: 'run_logs', name: 'nightly-report', dagRunId: '20260701T010000Z', query: 'tail=100' },
      'dagu://runs/nightly-report/20260701T010000Z/logs?tail=100',
    ],
    [
      'step_log',
      { target: 'step_log', name: 'n', dagRunId: '1', stepName: 'build output' },
      'dagu://runs/n/1/steps/build%20output/logs',
    ],
    [
      'step_log sub + query',
      { target: 'step_log', name: 'n', dagRunId: '1', subRunId: 'c', stepName: 's', query: 'head=5' },
      'dagu://runs/n/1/sub/c/steps/s/logs?head=5',
    ],
    [
      'step_log foreach',
      { target: 'step_log', name: 'n', dagRunId: '1', stepName: 's', item: '2.inner.0', bodyStepName: 'b' },
      'dagu://runs/n/1/steps/s/foreach/2.inner.0/steps/b/logs',
    ],
    [
      'step_log sub foreach + query',
      {
        target: 'step_log',
        name: 'n',
        dagRunId: '1',
        subRunId: 'c',
        stepName: 's',
        item: '0',
        bodyStepName: 'b',
        query: 'offset=5&limit=10',
      },
      'dagu://runs/n/1/sub/c/steps/s/foreach/0/steps/b/logs?offset=5&limit=10',
    ],
    [
      'foreach_items',
      { target: 'foreach_items', name: 'n', dagRunId: '1', stepName: 's', query: 'status=failed' },
      'dagu://runs/n/1/steps/s/foreach?status=failed',
    ],
    [
      'foreach_items sub',
      { target: 'foreach_items', name: 'n', dagRunId: '1', subRunId: 'c', stepName: 's' },
      'dagu://runs/n/1/sub/c/steps/s/foreach',
    ],
    [
      'foreach_item',
      { target: 'foreach_item', name: 'n', dagRunId: '1', stepName: 's', item: '3' },
      'dagu://runs/n/1/steps/s/foreach/3',
    ],
    [
      'foreach_item sub',
      { target: 'foreach_item', name: 'n', dagRunId: '1', subRunId: 'c', stepName: 's', item: '3' },
      'dagu://runs/n/1/sub/c/steps/s/foreach/3',
    ],
  ];
  for (const [label, input, uri] of cases) {
    test(`${label} → ${uri ?? 'no uri'}`, () => {
      const resolved = resolveReadInput(input);
      assert.equal(resolved.uri, uri);
      assert.equal('uri' in resolved, uri !== undefined);
    });
  }

  test('the contract examples resolve exactly', () => {
    assert.deepEqual(resolveReadInput({ uri: 'dagu://reference/authoring' }), {
      mode: 'uri',
      target: 'reference',
      fields: { name: 'authoring' },
      uri: 'dagu://reference/authoring',
      supplied: ['name'],
    });
    assert.deepEqual(resolveReadInput({ target: 'reference' }), {
      mode: 'target',
      target: 'reference',
      fields: { name: 'authoring' },
      uri: 'dagu://reference/authoring',
      supplied: [],
    });
    assert.deepEqual(resolveReadInput({ target: 'dag_spec', name: 'nightly-report' }), {
      mode: 'target',
      target: 'dag_spec',
      fields: { name: 'nightly-report' },
      uri: 'dagu://dags/nightly-report/spec',
      supplied: ['name'],
    });
    assert.deepEqual(
      resolveReadInput({
        target: 'run_logs',
        name: 'nightly-report',
        dagRunId: '20260701T010000Z',
        query: 'tail=100',
      }),
      {
        mode: 'target',
        target: 'run_logs',
        fields: { name: 'nightly-report', dagRunId: '20260701T010000Z', query: 'tail=100' },
        query: { raw: 'tail=100', params: [['tail', '100']] },
        uri: 'dagu://runs/nightly-report/20260701T010000Z/logs?tail=100',
        supplied: ['name', 'dagRunId', 'query'],
      },
    );
    assertError(
      { uri: 'dagu://reference/authoring', target: 'reference' },
      {
        code: 'invalid_tool_input',
        field: 'target',
        target: 'reference',
        uri: 'dagu://reference/authoring',
      },
    );
  });
});

describe('input must be a plain JSON object', () => {
  const notObjects: Array<[string, unknown]> = [
    ['array', []],
    ['array of object', [{ target: 'dags' }]],
    ['string', 'dags'],
    ['empty string', ''],
    ['null', null],
    ['undefined', undefined],
    ['number', 1],
    ['boolean', true],
    ['date', new Date()],
    ['map', new Map([['target', 'dags']])],
    [
      'class instance',
      new (class Input {
        target = 'dags';
      })(),
    ],
  ];
  for (const [label, raw] of notObjects) {
    test(`${label} → invalid_tool_input without field`, () => {
      const error = assertError(raw, invalid());
      assert.equal(error.message, 'Tool input must be a JSON object.');
    });
  }

  test('a null-prototype object is a plain object', () => {
    const raw = Object.assign(Object.create(null) as Record<string, unknown>, { target: 'dags' });
    assert.equal(resolveReadInput(raw).target, 'dags');
  });
});

describe('unknown fields', () => {
  for (const key of [
    'foo',
    'Target',
    'URI',
    'dagRunID',
    'constructor',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '',
  ]) {
    test(`${JSON.stringify(key)} is unknown`, () => {
      assertError({ target: 'dags', [key]: 'x' }, invalid(key, 'dags'));
    });
  }

  test('an own __proto__ key from JSON.parse is unknown (object, null, string values)', () => {
    // A target or uri supplied beside it is named in the error; one inside `__proto__` is not supplied.
    for (const [text, context] of [
      ['{"__proto__": {"target": "dags"}}', {}],
      ['{"target": "dags", "__proto__": null}', { target: 'dags' }],
      ['{"__proto__": "x", "uri": "dagu://dags"}', { uri: 'dagu://dags' }],
    ] as const) {
      const error = assertError(JSON.parse(text), { ...invalid('__proto__'), ...context });
      assert.equal(error.message, 'Unknown field "__proto__".');
    }
  });

  test('an own __proto__ key made with a computed key or defineProperty is unknown', () => {
    assertError({ ['__proto__']: 1, target: 'dags' }, invalid('__proto__', 'dags'));
    const raw: Record<string, unknown> = { target: 'dags' };
    Object.defineProperty(raw, '__proto__', {
      value: 1,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    assertError(raw, invalid('__proto__', 'dags'));
  });

  test('several unknown fields: no field, all of them in details.fields, in input order', () => {
    const error = assertError({ a: 1, target: 'dags', b: 2 }, invalid(undefined, 'dags'));
    assert.deepEqual(error.details, { fields: ['a', 'b'] });
    assert.equal(error.message, 'Unknown fields "a", "b".');
    const brief = assertError({ foo: 1, bar: 2, target: 'dags' }, invalid(undefined, 'dags'));
    assert.deepEqual(brief.details, { fields: ['foo', 'bar'] });
    assert.equal('field' in brief, false);
  });

  test('one unknown field: field, no details', () => {
    const error = assertError({ foo: 1, target: 'dags' }, invalid('foo', 'dags'));
    assert.equal(error.details, undefined);
  });

  test('unknown fields are reported before type errors and mode errors', () => {
    assertError({ target: 5, foo: 1 }, invalid('foo'));
    assertError(
      { uri: 'dagu://dags', target: 'dags', foo: 1 },
      { ...invalid('foo', 'dags'), uri: 'dagu://dags' },
    );
    // An unsupported target value is named as supplied.
    assertError({ target: 'nope', foo: 1 }, invalid('foo', 'nope'));
  });
});

describe('types', () => {
  const STRING_FIELDS = READ_INPUT_FIELDS.filter((field) => field !== 'limit');
  for (const field of STRING_FIELDS) {
    for (const [label, value] of [
      ['number', 5],
      ['boolean', false],
      ['object', { a: 1 }],
      ['array', ['x']],
    ] as const) {
      test(`${field} as ${label} → invalid_tool_input on ${field}`, () => {
        // The target is named when supplied as text; a wrong-typed target or uri names nothing.
        const target = field === 'target' ? undefined : 'dags';
        const error = assertError({ target: 'dags', [field]: value }, invalid(field, target));
        assert.equal(error.message, `The ${field} field must be a string or null.`);
      });
    }
  }
  for (const [label, value] of [
    ['string', '5'],
    ['fraction', 5.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['boolean', true],
    ['array', [5]],
  ] as const) {
    test(`limit as ${label} → invalid_tool_input on limit`, () => {
      const error = assertError(
        { target: 'dag_search', search: 'x', limit: value },
        invalid('limit', 'dag_search'),
      );
      assert.equal(error.message, 'The limit field must be an integer or null.');
    });
  }

  test('several wrong types: no field, all of them in details.fields, in input order', () => {
    let error = assertError({ target: 'dags', name: 1, uri: false }, invalid(undefined, 'dags'));
    assert.deepEqual(error.details, { fields: ['name', 'uri'] });
    assert.equal(error.message, 'The name and uri fields must be strings or null.');
    error = assertError({ limit: '5', target: 5, search: [], path: {} }, invalid());
    assert.deepEqual(error.details, { fields: ['limit', 'target', 'search', 'path'] });
    assert.equal(
      error.message,
      'The target, search and path fields must be strings or null, and the limit field must be an integer or null.',
    );
    error = assertError(
      { target: 'dag_search', search: 'x', limit: 1.5, name: null },
      invalid('limit', 'dag_search'),
    );
    assert.equal(error.details, undefined);
  });

  test('type errors come before mode errors', () => {
    assertError({ uri: 'dagu://dags', target: 5 }, { ...invalid('target'), uri: 'dagu://dags' });
    assertError({ uri: 7 }, invalid('uri'));
  });

  test('null is absent for every field', () => {
    const raw: Record<string, unknown> = Object.fromEntries(READ_INPUT_FIELDS.map((field) => [field, null]));
    raw.target = 'dags';
    assert.deepEqual(resolveReadInput(raw), { mode: 'target', target: 'dags', fields: {}, supplied: [] });
  });
});

describe('trimming', () => {
  test('target and string fields are trimmed', () => {
    const resolved = resolveReadInput({
      target: ' \t step_log \n',
      name: '  nightly ',
      dagRunId: ' r1',
      subRunId: 'c1 ',
      stepName: ' build step ',
      item: ' 3 ',
      bodyStepName: ' body ',
      query: '  tail=5  ',
    });
    assert.deepEqual(resolved.fields, {
      name: 'nightly',
      dagRunId: 'r1',
      subRunId: 'c1',
      stepName: 'build step',
      item: '3',
      bodyStepName: 'body',
      query: 'tail=5',
    });
    assert.equal(
      resolved.uri,
      'dagu://runs/nightly/r1/sub/c1/steps/build%20step/foreach/3/steps/body/logs?tail=5',
    );
  });

  test('workspace, path, search, prefix, cursor are trimmed', () => {
    const search = resolveReadInput({
      target: 'wiki_search',
      search: ' deploy ',
      workspace: ' ops ',
      prefix: ' guides ',
      cursor: ' c ',
      limit: 5,
    });
    assert.deepEqual(search.fields, {
      search: 'deploy',
      workspace: 'ops',
      prefix: 'guides',
      cursor: 'c',
      limit: 5,
    });
    const page = resolveReadInput({ target: 'wiki_page', workspace: ' default ', path: ' a b/c ' });
    assert.deepEqual(page.fields, { workspace: 'default', path: 'a b/c' });
  });

  test('password is kept exactly: spaces kept, spaces-only kept, empty is absent', () => {
    const base = { target: 'workbook', path: 'b.xlsx' };
    assert.equal(resolveReadInput({ ...base, password: '  pw  ' }).fields.password, '  pw  ');
    assert.equal(resolveReadInput({ ...base, password: '   ' }).fields.password, '   ');
    assert.equal('password' in resolveReadInput({ ...base, password: '' }).fields, false);
    assert.equal('password' in resolveReadInput({ ...base, password: null }).fields, false);
  });

  test('a forbidden password fails when non-empty, even spaces-only; empty passes', () => {
    assertError({ target: 'dags', password: '   ' }, invalid('password', 'dags'));
    assert.equal(resolveReadInput({ target: 'dags', password: '' }).target, 'dags');
    assertError(
      { uri: 'dagu://dags', password: ' ' },
      { code: 'invalid_tool_input', field: 'password', uri: 'dagu://dags' },
    );
    assert.equal(resolveReadInput({ uri: 'dagu://dags', password: '' }).target, 'dags');
  });
});

describe('addressing mode', () => {
  test('neither target nor uri', () => {
    assertError({}, invalid());
    assertError({ target: '', uri: '  ' }, invalid());
    assertError({ target: '' }, invalid('target'));
    assertError({ target: '   ' }, invalid('target'));
    assertError({ target: null }, invalid('target'));
    assertError({ uri: '' }, invalid('uri'));
  });

  test('target-mode fields without target', () => {
    const error = assertError({ name: 'nightly' }, invalid('target'));
    assert.equal(error.message, 'The target field is required for target mode.');
    assertError({ limit: 5 }, invalid('target'));
  });

  test('uri with one target-mode field: `field` names it, details.fields names uri and it', () => {
    const error = assertError(
      { uri: ' dagu://dags ', query: 'page=1' },
      { code: 'invalid_tool_input', field: 'query', uri: 'dagu://dags' },
    );
    assert.deepEqual(error.details, { fields: ['uri', 'query'] });
    const limit = assertError(
      { uri: 'dagu://dags', limit: 5 },
      { code: 'invalid_tool_input', field: 'limit', uri: 'dagu://dags' },
    );
    assert.deepEqual(limit.details, { fields: ['uri', 'limit'] });
  });

  // Every mixed-addressing shape with one stray field: `target` and each target-mode field.
  for (const stray of ['target', ...TARGET_FIELDS] as const) {
    test(`uri with ${stray} alone`, () => {
      const value = stray === 'target' ? 'reference' : sample('reference', stray);
      const error = assertError(
        { uri: 'dagu://reference/tools', [stray]: value },
        {
          code: 'invalid_tool_input',
          field: stray,
          uri: 'dagu://reference/tools',
          ...(stray === 'target' ? { target: 'reference' } : {}),
        },
      );
      assert.deepEqual(error.details, { fields: ['uri', stray] });
      assert.equal(error.message, `URI mode cannot be combined with target-mode fields (${stray}).`);
    });
  }

  test('the shapes of the contract and of Dagu 2.15.1: field and details both', () => {
    const shapes: Array<[Record<string, unknown>, string]> = [
      [{ uri: 'dagu://reference/tools', name: 'tools' }, 'name'],
      [{ uri: 'dagu://reference/tools', dagRunId: 'run-id' }, 'dagRunId'],
      [{ uri: 'dagu://runs', query: 'name=nightly' }, 'query'],
      [{ target: 'reference', uri: 'dagu://reference/tools' }, 'target'],
      [{ uri: 'dagu://reference/authoring', target: 'reference' }, 'target'],
    ];
    for (const [raw, field] of shapes) {
      const context = {
        uri: raw.uri as string,
        ...(raw.target === undefined ? {} : { target: 'reference' }),
      };
      const error = assertError(raw, { code: 'invalid_tool_input', field, ...context });
      assert.deepEqual(error.details, { fields: ['uri', field] }, JSON.stringify(raw));
    }
  });

  test('uri with several target-mode fields: no `field`, details.fields names uri and all of them', () => {
    const error = assertError(
      { uri: 'dagu://runs/n/1', dagRunId: '1', name: 'n', target: 'run' },
      { code: 'invalid_tool_input', target: 'run', uri: 'dagu://runs/n/1' },
    );
    assert.equal(error.field, undefined);
    assert.deepEqual(error.details, { fields: ['uri', 'target', 'name', 'dagRunId'] });
    assert.equal(
      error.message,
      'URI mode cannot be combined with target-mode fields (target, name, dagRunId).',
    );
    const pair = assertError(
      { uri: 'dagu://dags', query: 'page=1', limit: 5 },
      { code: 'invalid_tool_input', uri: 'dagu://dags' },
    );
    assert.equal(pair.field, undefined);
    assert.deepEqual(pair.details, { fields: ['uri', 'query', 'limit'] });
  });

  test('uri with every target-mode field at once', () => {
    const raw: Record<string, unknown> = { uri: 'dagu://dags', target: 'dags' };
    for (const field of TARGET_FIELDS) raw[field] = sample('dags', field);
    const error = assertError(raw, { code: 'invalid_tool_input', target: 'dags', uri: 'dagu://dags' });
    assert.equal(error.field, undefined);
    assert.deepEqual(error.details, { fields: ['uri', 'target', ...TARGET_FIELDS] });
  });

  test('blank and null target-mode fields beside a stray one are not named', () => {
    const error = assertError(
      { uri: 'dagu://dags', target: ' ', name: null, query: '', dagRunId: 'r1' },
      { code: 'invalid_tool_input', field: 'dagRunId', uri: 'dagu://dags' },
    );
    assert.deepEqual(error.details, { fields: ['uri', 'dagRunId'] });
  });

  test('blank and null target-mode fields do not make a request mixed', () => {
    const resolved = resolveReadInput({
      uri: 'dagu://dags',
      target: '  ',
      name: null,
      query: '',
      limit: null,
    });
    assert.equal(resolved.mode, 'uri');
    assert.equal(resolved.target, 'dags');
  });

  test('a malformed uri in a mixed request is reported as mixed, not as a URI error', () => {
    const error = assertError(
      { uri: 'http://x', target: 'dags' },
      { code: 'invalid_tool_input', field: 'target', target: 'dags', uri: 'http://x' },
    );
    assert.deepEqual(error.details, { fields: ['uri', 'target'] });
  });
});

describe('targets', () => {
  for (const supplied of [
    'DAGS',
    'Dags',
    'dag_specs',
    'foo',
    'Docs',
    'dag_profile',
    '__proto__',
    'constructor',
    'toString',
  ]) {
    test(`${supplied} → unsupported_read_target`, () => {
      const error = assertError(
        { target: ` ${supplied} `, name: 'x' },
        { code: 'unsupported_read_target', field: 'target', target: supplied },
      );
      assert.match(error.message, /^Unsupported read target/);
    });
  }

  test('deprecated aliases resolve to the wiki targets', () => {
    assert.deepEqual(resolveReadInput({ target: 'docs' }), {
      mode: 'target',
      target: 'wiki',
      fields: { workspace: 'all' },
      uri: 'dagu://wiki',
      supplied: [],
    });
    const page = resolveReadInput({ target: 'doc', workspace: 'default', path: 'a' });
    assert.equal(page.target, 'wiki_page');
    assert.equal(page.uri, 'dagu://wiki/default/a');
    assert.equal(resolveReadInput({ target: ' doc_search ', search: 'x' }).target, 'wiki_search');
    const error = assertError({ target: 'doc' }, invalid(undefined, 'wiki_page'));
    assert.deepEqual(error.details, { fields: ['workspace', 'path'] });
    assertError({ target: 'doc', path: 'a' }, invalid('workspace', 'wiki_page'));
  });

  test('defaults: reference topic, workspace all', () => {
    assert.deepEqual(resolveReadInput({ target: 'reference' }).fields, { name: 'authoring' });
    assert.deepEqual(resolveReadInput({ target: 'reference', name: 'tools' }).fields, { name: 'tools' });
    for (const target of ['wiki', 'dag_search', 'wiki_search'] as const) {
      assert.equal(resolveReadInput({ target, ...BASE[target] }).fields.workspace, 'all');
      assert.equal(resolveReadInput({ target, ...BASE[target], workspace: 'ops' }).fields.workspace, 'ops');
    }
  });
});

describe('field values', () => {
  for (const target of ['dag_search', 'wiki_search'] as const) {
    for (const limit of [1, 50]) {
      test(`${target}: limit ${limit} is accepted`, () => {
        assert.equal(resolveReadInput({ target, search: 'x', limit }).fields.limit, limit);
      });
    }
    for (const limit of [0, 51, -1, 1e9]) {
      test(`${target}: limit ${limit} is rejected`, () => {
        const error = assertError({ target, search: 'x', limit }, invalid('limit', target));
        assert.equal(
          error.message,
          `The limit field must be an integer from 1 through 50 for target ${target}.`,
        );
      });
    }
  }

  test('wiki_page: workspace all is refused; All is a workspace name', () => {
    assertError({ target: 'wiki_page', workspace: 'all', path: 'a' }, invalid('workspace', 'wiki_page'));
    assert.equal(
      resolveReadInput({ target: 'wiki_page', workspace: 'All', path: 'a' }).uri,
      'dagu://wiki/All/a',
    );
  });

  for (const path of [
    '/guides',
    'guides/',
    'a//b',
    '.x',
    'con',
    'docs/nul.md',
    'a*b',
    'a/b.',
    'é',
    'x'.repeat(253),
  ]) {
    test(`wiki_page: path ${JSON.stringify(path.slice(0, 20))} is refused`, () => {
      assertError({ target: 'wiki_page', workspace: 'default', path }, invalid('path', 'wiki_page'));
    });
  }
  for (const path of ['a', 'Guides/Deploy v2', '_x/y-z.1', 'x'.repeat(252)]) {
    test(`wiki_page: path ${JSON.stringify(path.slice(0, 20))} is accepted`, () => {
      assert.equal(resolveReadInput({ target: 'wiki_page', workspace: 'default', path }).fields.path, path);
    });
  }

  for (const [path, ok] of [
    ['book.xlsx', true],
    ['/data/B.XLSM', true],
    ['rel/dir/Book.XlSx', true],
    ['book.xls', false],
    ['book.csv', false],
    ['book', false],
    ['book.xlsx.bak', false],
    ['.xlsx', false],
  ] as const) {
    test(`workbook: path ${path} is ${ok ? 'accepted' : 'refused'}`, () => {
      if (ok) assert.equal(resolveReadInput({ target: 'workbook', path }).fields.path, path);
      else assertError({ target: 'workbook', path }, invalid('path', 'workbook'));
    });
  }

  test("workbook: the extension message is exactly workbook-profile.md's, with the file name", () => {
    for (const [path, name] of [
      ['/data/reports/q1.csv', 'q1.csv'],
      ['  book.xls ', 'book.xls'],
      ['notes', 'notes'],
      ['dir/book.xlsx.bak', 'book.xlsx.bak'],
      ['/data/dir/', 'dir'],
    ]) {
      const error = assertError({ target: 'workbook', path }, invalid('path', 'workbook'));
      assert.equal(error.message, `${name}: only .xlsx and .xlsm workbooks are supported; save as .xlsx`);
    }
  });

  for (const target of ['wiki', 'wiki_search'] as const) {
    for (const prefix of ['/x', 'x/', 'a//b', '.x', 'lpt1']) {
      test(`${target}: prefix ${prefix} is refused`, () => {
        assertError({ target, ...BASE[target], prefix }, invalid('prefix', target));
      });
    }
  }

  test('wiki: prefix field with a prefix query parameter is an error on prefix', () => {
    const error = assertError({ target: 'wiki', prefix: 'a', query: 'prefix=b' }, invalid('prefix', 'wiki'));
    assert.match(error.message, /not both/);
  });

  test('wiki: prefix field joins the query and the uri', () => {
    const resolved = resolveReadInput({ target: 'wiki', prefix: 'Team Notes', query: 'flat=true' });
    assert.deepEqual(resolved.query, {
      raw: 'flat=true&prefix=Team+Notes',
      params: [
        ['flat', 'true'],
        ['prefix', 'Team Notes'],
      ],
    });
    assert.equal(resolved.fields.prefix, 'Team Notes');
    assert.equal(resolved.fields.query, 'flat=true');
  });

  test('query starting with ? is an error on query', () => {
    const error = assertError({ target: 'dags', query: '?page=1' }, invalid('query', 'dags'));
    assert.equal(error.message, "The query must not start with '?'.");
  });
});

describe('a path-segment value of . or .. names nothing: resource_not_found, no uri', () => {
  const NOUN: Partial<Record<TargetField, string>> = {
    name: 'DAG',
    dagRunId: 'DAG-run',
    subRunId: 'sub DAG-run',
    stepName: 'step',
    item: 'foreach item',
    bodyStepName: 'body step',
    workspace: 'workspace',
  };
  for (const target of READ_TARGETS) {
    for (const field of Object.keys(NOUN) as TargetField[]) {
      if (FIELD_RULES[target][field] === 'forbidden') continue;
      // workspace is a URI segment only for the Wiki listing and page; the searches filter by it.
      if (field === 'workspace' && target !== 'wiki' && target !== 'wiki_page') continue;
      for (const value of ['.', '..', ' .. ']) {
        test(`${target} × ${field} = ${JSON.stringify(value)}`, () => {
          const input: Record<string, unknown> = { target, ...BASE[target], [field]: value };
          if (target === 'step_log' && field === 'item') input.bodyStepName = 'body';
          if (target === 'step_log' && field === 'bodyStepName') input.item = '3';
          const error = errorOf(() => resolveReadInput(input));
          const noun = target === 'reference' && field === 'name' ? 'reference topic' : NOUN[field];
          assert.deepEqual(error, {
            code: 'resource_not_found',
            message: `The ${noun} ${JSON.stringify(value.trim())} does not exist.`,
            target,
            field,
          });
        });
      }
    }
  }

  test('the brief example: dag_spec name ".." has no uri', () => {
    assert.deepEqual(
      errorOf(() => resolveReadInput({ target: 'dag_spec', name: '..' })),
      {
        code: 'resource_not_found',
        message: 'The DAG ".." does not exist.',
        target: 'dag_spec',
        field: 'name',
      },
    );
  });

  test('the outermost dotted field is named (field-table order)', () => {
    const error = errorOf(() =>
      resolveReadInput({ target: 'step_log', name: 'n', dagRunId: '..', stepName: '.', subRunId: '.' }),
    );
    assert.equal(error.field, 'dagRunId');
  });

  test('input errors come first: dotted values do not hide an invalid query or a missing field', () => {
    assertError(
      { target: 'run_logs', name: '..', dagRunId: '1', query: 'bogus=1' },
      invalid('query', 'run_logs'),
    );
    assertError({ target: 'run', name: '..' }, invalid('dagRunId', 'run'));
    assertError({ target: 'dag', name: '.', cursor: 'c' }, invalid('cursor', 'dag'));
  });

  test('values that merely contain dots are ordinary', () => {
    for (const value of ['...', '.x', '..x', 'a.b', 'x..']) {
      assert.equal(resolveReadInput({ target: 'dag_spec', name: value }).fields.name, value);
    }
    assert.equal(
      resolveReadInput({ target: 'foreach_item', ...BASE.foreach_item, item: '2.inner.0' }).target,
      'foreach_item',
    );
  });

  test('search targets take any workspace value as a filter', () => {
    for (const target of ['dag_search', 'wiki_search'] as const) {
      assert.equal(resolveReadInput({ target, search: 'x', workspace: '..' }).fields.workspace, '..');
    }
  });

  test('URI mode keeps reporting a dot segment as a malformed URI', () => {
    assertError(
      { uri: 'dagu://dags/%2E%2E/spec' },
      { code: 'invalid_resource_uri', field: 'uri', uri: 'dagu://dags/%2E%2E/spec' },
    );
  });
});

describe('supplied: the fields the caller gave, as opposed to defaults (drives echo fields)', () => {
  test('target mode: the effective fields given, in field-table order; defaults are not supplied', () => {
    assert.deepEqual(resolveReadInput({ target: 'wiki' }).supplied, []);
    assert.deepEqual(resolveReadInput({ target: 'wiki', workspace: 'all' }).supplied, ['workspace']);
    assert.deepEqual(resolveReadInput({ target: 'wiki', prefix: 'a', query: 'flat=true' }).supplied, [
      'query',
      'prefix',
    ]);
    assert.deepEqual(resolveReadInput({ target: 'reference' }).supplied, []);
    assert.deepEqual(resolveReadInput({ target: 'reference', name: 'tools' }).supplied, ['name']);
    for (const target of ['dag_search', 'wiki_search'] as const) {
      assert.deepEqual(resolveReadInput({ target, search: 'x', limit: 5 }).supplied, ['search', 'limit']);
    }
    assert.deepEqual(
      resolveReadInput({
        stepName: 's',
        target: 'step_log',
        bodyStepName: 'b',
        item: '0',
        dagRunId: 'r',
        name: 'n',
        subRunId: 'c',
      }).supplied,
      ['name', 'dagRunId', 'subRunId', 'stepName', 'item', 'bodyStepName'],
    );
  });

  test('target mode: blank, null and empty fields are not supplied; a spaces-only password is', () => {
    assert.deepEqual(
      resolveReadInput({ target: 'wiki', workspace: '  ', prefix: null, query: '' }).supplied,
      [],
    );
    assert.deepEqual(resolveReadInput({ target: 'workbook', path: 'b.xlsx', password: ' ' }).supplied, [
      'path',
      'password',
    ]);
    assert.deepEqual(resolveReadInput({ target: 'workbook', path: 'b.xlsx', password: '' }).supplied, [
      'path',
    ]);
  });

  test('every target: supplied is exactly the given fields of the smallest valid input', () => {
    for (const target of READ_TARGETS) {
      const resolved = resolveReadInput({ target, ...BASE[target] });
      assert.deepEqual(
        resolved.supplied,
        TARGET_FIELDS.filter((field) => field in BASE[target]),
        target,
      );
    }
  });

  test('URI mode: the path values and the query, not the workspace default', () => {
    assert.deepEqual(resolveReadInput({ uri: 'dagu://wiki' }).supplied, []);
    assert.deepEqual(resolveReadInput({ uri: 'dagu://wiki?flat=true' }).supplied, ['query']);
    assert.deepEqual(resolveReadInput({ uri: 'dagu://wiki/ops' }).supplied, ['workspace']);
    assert.deepEqual(resolveReadInput({ uri: 'dagu://wiki/ops/a/b' }).supplied, ['workspace', 'path']);
    assert.deepEqual(resolveReadInput({ uri: 'dagu://reference' }).supplied, []);
    assert.deepEqual(resolveReadInput({ uri: 'dagu://runs?limit=5' }).supplied, ['query']);
    assert.deepEqual(
      resolveReadInput({ uri: 'dagu://runs/n/r/sub/c/steps/s/foreach/0/steps/b/logs?tail=1' }).supplied,
      ['name', 'dagRunId', 'subRunId', 'stepName', 'item', 'bodyStepName', 'query'],
    );
  });
});

describe('check order', () => {
  test('unsupported target before forbidden fields', () => {
    assertError(
      { target: 'nope', password: 'x' },
      { code: 'unsupported_read_target', field: 'target', target: 'nope' },
    );
  });
  test('forbidden before required', () => {
    assertError({ target: 'run', query: 'x' }, invalid('query', 'run'));
  });
  test('several forbidden fields: all of them in details.fields, in field-table order', () => {
    const error = assertError(
      { target: 'references', cursor: 'c', name: 'n' },
      invalid(undefined, 'references'),
    );
    assert.deepEqual(error.details, { fields: ['name', 'cursor'] });
    assert.equal(error.message, 'The name and cursor fields are not allowed for target references.');
    const brief = assertError({ target: 'dags', name: 'x', dagRunId: 'y' }, invalid(undefined, 'dags'));
    assert.deepEqual(brief.details, { fields: ['name', 'dagRunId'] });
    assert.equal('field' in brief, false);
    const three = assertError(
      { target: 'dags', limit: 5, password: 'p', name: 'x' },
      invalid(undefined, 'dags'),
    );
    assert.deepEqual(three.details, { fields: ['name', 'password', 'limit'] });
    assert.equal(three.message, 'The name, password and limit fields are not allowed for target dags.');
  });
  test('several missing required fields: all of them in details.fields, in field-table order', () => {
    const run = assertError({ target: 'run' }, invalid(undefined, 'run'));
    assert.deepEqual(run.details, { fields: ['name', 'dagRunId'] });
    assert.equal(run.message, 'The name and dagRunId fields are required for target run.');
    assert.equal('field' in run, false);
    const step = assertError({ target: 'step_log', dagRunId: 'r' }, invalid(undefined, 'step_log'));
    assert.deepEqual(step.details, { fields: ['name', 'stepName'] });
    const item = assertError({ target: 'foreach_item' }, invalid(undefined, 'foreach_item'));
    assert.deepEqual(item.details, { fields: ['name', 'dagRunId', 'stepName', 'item'] });
    assert.equal(
      item.message,
      'The name, dagRunId, stepName and item fields are required for target foreach_item.',
    );
    const one = assertError(
      { target: 'step_log', name: 'n', stepName: 's' },
      invalid('dagRunId', 'step_log'),
    );
    assert.equal(one.details, undefined);
  });
  test('forbidden fields are reported before missing ones', () => {
    const error = assertError({ target: 'run', query: 'x', cursor: 'c' }, invalid(undefined, 'run'));
    assert.deepEqual(error.details, { fields: ['query', 'cursor'] });
  });
  test('required before values', () => {
    assertError({ target: 'wiki_page', path: '/bad' }, invalid('workspace', 'wiki_page'));
  });
  test('values before query', () => {
    assertError({ target: 'wiki', prefix: '/bad', query: '%zz' }, invalid('prefix', 'wiki'));
  });
  test('query before the prefix conflict', () => {
    assertError({ target: 'wiki', prefix: 'a', query: 'prefix=b&flat=x' }, invalid('query', 'wiki'));
  });
});

describe('messages never echo a password', () => {
  const SECRET = 'S3cr3t-PW-xyz';
  const inputs: Array<Record<string, unknown>> = [
    { target: 'dags', password: SECRET },
    { uri: 'dagu://dags', password: SECRET },
    { target: 'workbook', path: 'x.csv', password: SECRET },
    { target: 'workbook', password: SECRET },
    { target: 'nope', password: SECRET },
    { password: SECRET },
    { target: 'workbook', path: 'b.xlsx', password: SECRET, bogus: 1 },
    { target: 'workbook', path: 'b.xlsx', password: SECRET, query: 'x' },
  ];
  for (const input of inputs) {
    test(JSON.stringify({ ...input, password: '…' }), () => {
      const error = errorOf(() => resolveReadInput(input));
      assert.equal(JSON.stringify(error).includes(SECRET), false);
    });
  }
});

describe('suppliedTarget: the target a check made before the read sees', () => {
  /** The target resolveReadInput settles on: the resolved read's, else its error's (none when unsupported). */
  const resolvedTarget = (raw: Record<string, unknown>): string | undefined => {
    try {
      return resolveReadInput(raw).target;
    } catch (error) {
      if (!(error instanceof ReadError)) throw error;
      return error.code === 'unsupported_read_target' ? undefined : error.toObject().target;
    }
  };

  test('names the target the read resolves, padded with any whitespace trim removes, aliases and near misses alike', () => {
    const names = [...READ_TARGETS, ...Object.keys(DEPRECATED_TARGET_ALIASES)];
    const near = names.flatMap((name) => [name.toUpperCase(), `${name}s`, name.slice(1), `${name}\u200b`]);
    const paddings = ['', ' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\ufeff', '\u2003', '\u3000'];
    let checked = 0;
    for (const name of [...names, ...near, 'work book', '']) {
      for (const [before, after] of paddings.flatMap((pad) => [
        [pad, ''],
        ['', pad],
        [pad, pad],
      ])) {
        const raw = { target: `${before}${name}${after}` };
        assert.equal(suppliedTarget(raw), resolvedTarget(raw), JSON.stringify(raw.target));
        checked++;
      }
    }
    assert.equal(suppliedTarget({ target: 'workbook ' }), 'workbook');
    assert.equal(suppliedTarget({ target: '\tdocs\n' }), 'wiki');
    assert.ok(checked > 1000);
  });

  test('names nothing for arguments that carry no target string', () => {
    for (const raw of [
      undefined,
      null,
      'workbook',
      ['workbook'],
      {},
      { target: 7 },
      { target: null },
      { uri: 'dagu://dags' },
    ]) {
      assert.equal(suppliedTarget(raw), undefined, JSON.stringify(raw));
    }
  });
});
