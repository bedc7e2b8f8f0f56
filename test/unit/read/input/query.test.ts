import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  appendQueryParam,
  parseUrlQuery,
  QUERY_TABLE,
  QUERY_TARGETS,
  type QueryTarget,
  queryValues,
  resolveReadInput,
  validateQuery,
} from '../../../../src/read/input/index.ts';
import { assertError, errorOf } from '../../../support/read-errors.ts';

// Required fields and the URI base of each query target, for both addressing modes.
const TARGET_INPUT: Record<QueryTarget, Record<string, string>> = {
  dags: {},
  runs: {},
  wiki: {},
  run_logs: { name: 'nightly', dagRunId: 'r1' },
  step_log: { name: 'nightly', dagRunId: 'r1', stepName: 'build' },
  foreach_items: { name: 'nightly', dagRunId: 'r1', stepName: 'fan' },
};
const URI_BASE: Record<QueryTarget, string> = {
  dags: 'dagu://dags',
  runs: 'dagu://runs',
  wiki: 'dagu://wiki',
  run_logs: 'dagu://runs/nightly/r1/logs',
  step_log: 'dagu://runs/nightly/r1/steps/build/logs',
  foreach_items: 'dagu://runs/nightly/r1/steps/fan/foreach',
};

const inTargetMode = (target: QueryTarget, query: string) => () =>
  resolveReadInput({ target, ...TARGET_INPUT[target], query });
const inUriMode = (target: QueryTarget, query: string) => () =>
  resolveReadInput({ uri: `${URI_BASE[target]}?${query}` });

function assertQueryRejected(target: QueryTarget, query: string): void {
  assertError(inTargetMode(target, query), { code: 'invalid_tool_input', field: 'query', target });
  const uri = `${URI_BASE[target]}?${query}`;
  assertError(inUriMode(target, query), { code: 'invalid_resource_uri', field: 'uri', target, uri });
}

function assertQueryAccepted(target: QueryTarget, query: string, params: Array<[string, string]>): void {
  const byTarget = inTargetMode(target, query)();
  assert.equal(byTarget.query?.raw, query);
  assert.deepEqual(byTarget.query?.params, params);
  const byUri = inUriMode(target, query)();
  assert.equal(byUri.target, target);
  assert.deepEqual(byUri.query?.params, params);
  assert.equal(byUri.uri, `${URI_BASE[target]}?${query}`);
}

// The contract's query table, transcribed independently: values at and beyond each bound.
interface ParamCase {
  valid: string[];
  invalid: string[];
  repeatable?: true;
}
const INT64_MAX = '9223372036854775807';
const INT64_OVER = '9223372036854775808';
const CONTRACT: Record<QueryTarget, Record<string, ParamCase>> = {
  dags: {
    page: { valid: ['1', '2', INT64_MAX], invalid: ['0', '-1', 'abc', '1.5', '1e3', INT64_OVER] },
    perPage: { valid: ['1', '200'], invalid: ['0', '201', '1000', 'ten'] },
    name: { valid: ['nightly', 'a b'], invalid: [] },
    labels: { valid: ['team', 'team,prod', 'team, prod'], invalid: ['team,', ',team', 'a,,b', ','] },
    sort: { valid: ['name', 'nextRun'], invalid: ['NAME', 'nextrun', 'mtime'] },
    order: { valid: ['asc', 'desc'], invalid: ['ASC', 'up'] },
  },
  runs: {
    name: { valid: ['nightly'], invalid: [] },
    dagRunId: { valid: ['20260701T010000Z', 'latest'], invalid: [] },
    status: { valid: ['0', '4', '8'], invalid: ['-1', '9', 'running', '1.0'], repeatable: true },
    fromDate: {
      valid: ['0', '1751331600', '-86400', INT64_MAX],
      invalid: ['yesterday', '1.5', '2026-07-01', INT64_OVER],
    },
    toDate: { valid: ['1751331600'], invalid: ['now', '17e8'] },
    limit: { valid: ['1', '500'], invalid: ['0', '501', 'all'] },
    cursor: { valid: ['opaque-cursor=='], invalid: [] },
    labels: { valid: ['a', 'a,b'], invalid: ['a,'] },
  },
  wiki: {
    page: { valid: ['1', '99'], invalid: ['0', 'first'] },
    perPage: { valid: ['1', '200'], invalid: ['0', '201'] },
    flat: { valid: ['true', 'false'], invalid: ['TRUE', '1', 'yes'] },
    sort: { valid: ['name', 'type', 'mtime'], invalid: ['nextRun', 'Name'] },
    order: { valid: ['asc', 'desc'], invalid: ['descending'] },
    prefix: {
      valid: ['guides', 'guides/deploy', 'Team Notes/v1.2', '_drafts'],
      invalid: [
        '/guides',
        'guides/',
        'a//b',
        '.hidden',
        'guides.',
        'con',
        'notes/LPT1.txt',
        'a*b',
        'x'.repeat(253),
      ],
    },
  },
  run_logs: {
    tail: { valid: ['1', '10000'], invalid: ['0', '10001', '-5', 'all'] },
  },
  step_log: {
    tail: { valid: ['1', '10000'], invalid: ['0', '10001'] },
    head: { valid: ['1', '10000'], invalid: ['0', '10001'] },
    offset: { valid: ['1', '1000000'], invalid: ['0', '-1'] },
    limit: { valid: ['1', '10000'], invalid: ['0', '10001'] },
    stream: { valid: ['stdout', 'stderr'], invalid: ['both', 'STDOUT'] },
  },
  foreach_items: {
    parent: { valid: ['2.inner', '0.outer.1.inner'], invalid: [] },
    status: {
      valid: ['not_started', 'running', 'succeeded', 'failed', 'aborted'],
      invalid: ['skipped', 'Failed'],
    },
    page: { valid: ['1', '7'], invalid: ['0'] },
    perPage: { valid: ['1', '500'], invalid: ['0', '501'] },
  },
};

describe('query table matches the contract', () => {
  for (const target of QUERY_TARGETS) {
    test(`${target} has exactly the contract parameters`, () => {
      assert.deepEqual(Object.keys(QUERY_TABLE[target].params).sort(), Object.keys(CONTRACT[target]).sort());
    });
    for (const [param, spec] of Object.entries(CONTRACT[target])) {
      test(`${target}.${param} is ${spec.repeatable ? '' : 'not '}repeatable`, () => {
        assert.equal(QUERY_TABLE[target].params[param]?.repeatable, spec.repeatable === true);
      });
    }
  }
});

describe('every parameter at and beyond its bounds, in both modes', () => {
  for (const target of QUERY_TARGETS) {
    for (const [param, spec] of Object.entries(CONTRACT[target])) {
      for (const value of spec.valid) {
        const query = `${param}=${encodeURIComponent(value)}`;
        test(`${target}: ${param}=${value.slice(0, 40)} is accepted`, () => {
          assertQueryAccepted(target, query, [[param, value]]);
        });
      }
      for (const value of spec.invalid) {
        const query = `${param}=${encodeURIComponent(value)}`;
        test(`${target}: ${param}=${value.slice(0, 40)} is rejected`, () => {
          assertQueryRejected(target, query);
        });
      }
      test(`${target}: empty ${param} is rejected (=, = , bare name)`, () => {
        assertQueryRejected(target, `${param}=`);
        assertQueryRejected(target, `${param}=%20`);
        assertQueryRejected(target, param);
      });
      const value = spec.valid[0] ?? '1';
      const twice = `${param}=${encodeURIComponent(value)}&${param}=${encodeURIComponent(value)}`;
      if (spec.repeatable) {
        test(`${target}: ${param} may be repeated`, () => {
          assertQueryAccepted(target, twice, [
            [param, value],
            [param, value],
          ]);
        });
      } else {
        test(`${target}: ${param} must not be repeated`, () => {
          const error = assertError(inTargetMode(target, twice), {
            code: 'invalid_tool_input',
            field: 'query',
            target,
          });
          assert.match(error.message, new RegExp(`${param} must not be repeated`));
          assertQueryRejected(target, twice);
        });
      }
    }
  }
});

describe('unknown parameters', () => {
  const everyName = new Set(QUERY_TARGETS.flatMap((target) => Object.keys(QUERY_TABLE[target].params)));
  for (const target of QUERY_TARGETS) {
    const foreign = [...everyName].filter((name) => !(name in CONTRACT[target]));
    for (const name of [...foreign, 'bogus', '__proto__', 'constructor', 'toString', 'Tail', 'active']) {
      if (name in CONTRACT[target]) continue;
      test(`${target}: ${name} is not supported`, () => {
        const error = assertError(inTargetMode(target, `${name}=1`), {
          code: 'invalid_tool_input',
          field: 'query',
          target,
        });
        assert.match(error.message, /is not supported/);
        assertQueryRejected(target, `${name}=1`);
      });
    }
  }
});

describe('URL query decoding like Go url.ParseQuery', () => {
  const cases: Array<[string, Array<[string, string]> | undefined]> = [
    [
      'a=1&b=2',
      [
        ['a', '1'],
        ['b', '2'],
      ],
    ],
    ['a', [['a', '']]],
    ['&&a=1&', [['a', '1']]],
    ['a==b', [['a', '=b']]],
    ['a=b+c', [['a', 'b c']]],
    ['a=b%2Bc', [['a', 'b+c']]],
    ['a=%E2%9C%93', [['a', '✓']]],
    ['%61=1', [['a', '1']]],
    ['a=%2f%2F', [['a', '//']]],
    ['a=1;b=2', undefined],
    ['a=1;', undefined],
    [';', undefined],
    ['a=%zz', undefined],
    ['a=%', undefined],
    ['a=%4', undefined],
    ['%zz=1', undefined],
    ['a=%FF', undefined],
    ['a=%C3', undefined],
    ['', []],
  ];
  for (const [raw, expected] of cases) {
    test(`${JSON.stringify(raw)} → ${expected === undefined ? 'malformed' : JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseUrlQuery(raw), expected);
    });
  }

  for (const target of QUERY_TARGETS) {
    for (const malformed of ['%zz', 'x=%zz', 'a=1;b=2', ';', 'x=%FF']) {
      test(`${target}: malformed ${malformed} is rejected in both modes`, () => {
        const error = assertError(inTargetMode(target, malformed), {
          code: 'invalid_tool_input',
          field: 'query',
          target,
        });
        assert.match(error.message, /malformed/);
        assertQueryRejected(target, malformed);
      });
    }
    test(`${target}: a query starting with ? is rejected in both modes`, () => {
      const first = Object.keys(CONTRACT[target])[0];
      assertError(inTargetMode(target, `?${first}=1`), {
        code: 'invalid_tool_input',
        field: 'query',
        target,
      });
      const uri = `${URI_BASE[target]}??${first}=1`;
      assertError(() => resolveReadInput({ uri }), {
        code: 'invalid_resource_uri',
        field: 'uri',
        target,
        uri,
      });
    });
  }

  test('+ is a space in values, %2B a plus; the raw query is echoed as given', () => {
    const resolved = resolveReadInput({ uri: 'dagu://dags?name=a+b&labels=x%2By' });
    assert.deepEqual(resolved.query?.params, [
      ['name', 'a b'],
      ['labels', 'x+y'],
    ]);
    assert.equal(resolved.uri, 'dagu://dags?name=a+b&labels=x%2By');
  });

  test('Go Atoi forms: leading zeros and an escaped sign are integers; int64 overflow is not', () => {
    assertQueryAccepted('dags', 'page=05', [['page', '05']]);
    assertQueryAccepted('dags', 'page=%2B5', [['page', '+5']]);
    assertQueryRejected('dags', `page=${INT64_OVER}`);
  });

  test('order of parameters is kept', () => {
    assertQueryAccepted('runs', 'limit=5&name=x', [
      ['limit', '5'],
      ['name', 'x'],
    ]);
  });
});

describe('values are never trimmed: a value must match its rule exactly after decoding', () => {
  // `+` decodes to a space, so `page=+5` is " 5", not 5.
  const padded = ['%205', '5%20', '%205%20', '+5', '5+', '%095', '5%0A', '%C2%A05'];
  for (const target of QUERY_TARGETS) {
    for (const [param, spec] of Object.entries(CONTRACT[target])) {
      const value = encodeURIComponent(spec.valid[0] ?? '1');
      for (const pad of padded) {
        const query = `${param}=${pad.replace('5', value)}`;
        test(`${target}: ${query} is rejected in both modes`, () => {
          const error = assertError(inTargetMode(target, query), {
            code: 'invalid_tool_input',
            field: 'query',
            target,
          });
          assert.equal(
            error.message,
            `The query parameter ${param} must not have leading or trailing whitespace.`,
          );
          assertQueryRejected(target, query);
        });
      }
    }
  }

  test('blank values are empty', () => {
    const error = errorOf(inTargetMode('run_logs', 'tail=%20%20'));
    assert.equal(error.message, 'The query parameter tail must not be empty or blank.');
    assertQueryRejected('dags', 'name=+');
  });

  test('inner spaces of a text value are kept', () => {
    assertQueryAccepted('dags', 'name=a+b%20c', [['name', 'a b c']]);
  });
});

describe('the raw query holds only characters a URI query may hold', () => {
  const bad: Array<[string, string]> = [
    ['tail= 5', 'a space'],
    ['tail=5+ 6', 'a space'],
    ['tail=5\t6', 'a control character (U+0009)'],
    ['tail=\u00005', 'a control character (U+0000)'],
    ['tail=5\u007f6', 'a control character (U+007F)'],
    ['tail=5\u0085', 'a control character (U+0085)'],
    ['tail="5"', 'the character "\\""'],
    ['tail=<5>', 'the character "<"'],
    ['tail=5|6', 'the character "|"'],
    ['tail=5\\', 'the character "\\\\"'],
    ['tail=5^', 'the character "^"'],
    ['tail=5`', 'the character "`"'],
    ['tail={5}', 'the character "{"'],
    ['tail=[5]', 'the character "["'],
    ['tail=é', 'the character "é"'],
    ['tail=🚀', 'the character "🚀"'],
  ];
  for (const [query, described] of bad) {
    test(`${JSON.stringify(query)} is rejected in target mode (${described})`, () => {
      const error = assertError(inTargetMode('run_logs', query), {
        code: 'invalid_tool_input',
        field: 'query',
        target: 'run_logs',
      });
      assert.equal(
        error.message,
        `The query contains ${described}, which cannot appear in a URI query; percent-encode it (for example a space as %20).`,
      );
    });
  }
  // In URI mode a C0 control character or DEL is refused by the URI check itself; the rest here.
  const c0OrDel = (q: string) => [...q].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  for (const [query] of bad.filter(([q]) => !c0OrDel(q))) {
    test(`dagu://…/logs?${JSON.stringify(query)} is invalid_resource_uri`, () => {
      const uri = `${URI_BASE.run_logs}?${query}`;
      assertError(() => resolveReadInput({ uri }), {
        code: 'invalid_resource_uri',
        field: 'uri',
        target: 'run_logs',
        uri,
      });
    });
  }

  test('the brief example: "tail= 5" is refused, so no URI with a raw space is returned', () => {
    assertError(inTargetMode('run_logs', 'tail= 5'), {
      code: 'invalid_tool_input',
      field: 'query',
      target: 'run_logs',
    });
    assertError(() => resolveReadInput({ uri: 'dagu://runs/nightly/r1/logs?tail= 5' }), {
      code: 'invalid_resource_uri',
      field: 'uri',
      target: 'run_logs',
      uri: 'dagu://runs/nightly/r1/logs?tail= 5',
    });
  });

  test("every RFC 3986 query character is accepted raw (sub-delims, ':', '@', '/', '?')", () => {
    assertQueryAccepted('runs', "cursor=a-._~!$'()*,:@/?%3Bz", [['cursor', "a-._~!$'()*,:@/?;z"]]);
    assertQueryAccepted('dags', 'name=%C3%A9%20x', [['name', 'é x']]);
  });

  test('characters are checked before the URL encoding', () => {
    const error = errorOf(inTargetMode('dags', 'name=%zz x'));
    assert.match(error.message, /a space/);
  });

  test('a query field is trimmed as a field; surrounding whitespace never reaches the URI', () => {
    assert.equal(inTargetMode('run_logs', ' \ttail=5 \n')().uri, 'dagu://runs/nightly/r1/logs?tail=5');
  });

  test('the prefix field joins the query escaped, so the returned URI stays valid', () => {
    const resolved = resolveReadInput({ target: 'wiki', prefix: 'Team Notes/v1', query: 'flat=true' });
    assert.equal(resolved.uri, 'dagu://wiki?flat=true&prefix=Team+Notes%2Fv1');
  });

  test('an empty effective query is absent', () => {
    assert.equal(resolveReadInput({ target: 'dags', query: '   ' }).query, undefined);
    const resolved = resolveReadInput({ uri: 'dagu://dags?' });
    assert.equal(resolved.query, undefined);
    assert.equal(resolved.uri, 'dagu://dags');
  });
});

describe('step_log positioning: at most one of tail/head/offset; limit alone or with offset', () => {
  const positioning = ['tail', 'head', 'offset', 'limit'] as const;
  for (let mask = 0; mask < 16; mask++) {
    const names = positioning.filter((_, i) => (mask & (1 << i)) !== 0);
    const movers = names.filter((name) => name !== 'limit');
    const valid =
      movers.length <= 1 && (!names.includes('limit') || movers.every((name) => name === 'offset'));
    for (const stream of ['', 'stream=stderr']) {
      const query = [...names.map((name) => `${name}=5`), ...(stream ? [stream] : [])].join('&');
      if (query === '') continue;
      test(`${query} is ${valid ? 'accepted' : 'rejected'}`, () => {
        if (valid) {
          const params = query.split('&').map((pair) => pair.split('=') as [string, string]);
          assertQueryAccepted('step_log', query, params);
          const foreach = resolveReadInput({
            uri: `dagu://runs/n/1/steps/s/foreach/0/steps/b/logs?${query}`,
          });
          assert.equal(foreach.target, 'step_log');
        } else {
          assertQueryRejected('step_log', query);
          const uri = `dagu://runs/n/1/sub/c/steps/s/foreach/0/steps/b/logs?${query}`;
          assertError(() => resolveReadInput({ uri }), {
            code: 'invalid_resource_uri',
            field: 'uri',
            target: 'step_log',
            uri,
          });
        }
      });
    }
  }

  test('run_logs does not take head, offset, limit or stream', () => {
    for (const name of ['head', 'offset', 'limit', 'stream']) assertQueryRejected('run_logs', `${name}=5`);
  });
});

describe('query helpers', () => {
  test('validateQuery returns raw and trimmed params; target-mode error names query', () => {
    assert.deepEqual(validateQuery('runs', 'status=1&status=2', { mode: 'target' }), {
      raw: 'status=1&status=2',
      params: [
        ['status', '1'],
        ['status', '2'],
      ],
    });
    assertError(() => validateQuery('runs', 'status=9', { mode: 'target' }), {
      code: 'invalid_tool_input',
      field: 'query',
      target: 'runs',
    });
    assertError(() => validateQuery('runs', 'status=9', { mode: 'uri', uri: 'dagu://runs?status=9' }), {
      code: 'invalid_resource_uri',
      field: 'uri',
      target: 'runs',
      uri: 'dagu://runs?status=9',
    });
  });

  test('queryValues lists every value of a parameter', () => {
    const query = validateQuery('runs', 'status=1&name=x&status=4', { mode: 'target' });
    assert.deepEqual(queryValues(query, 'status'), ['1', '4']);
    assert.deepEqual(queryValues(undefined, 'status'), []);
  });

  test('appendQueryParam escapes like Go QueryEscape and keeps the given query', () => {
    assert.deepEqual(appendQueryParam(undefined, 'prefix', 'Team Notes/v1'), {
      raw: 'prefix=Team+Notes%2Fv1',
      params: [['prefix', 'Team Notes/v1']],
    });
    const base = validateQuery('wiki', 'flat=true', { mode: 'target' });
    assert.equal(appendQueryParam(base, 'prefix', 'a').raw, 'flat=true&prefix=a');
  });

  test('messages name the parameter and its rule', () => {
    const error = errorOf(inTargetMode('dags', 'perPage=500'));
    assert.equal(
      error.message,
      'The query parameter perPage must be an integer from 1 through 200 for target dags.',
    );
    const unknown = errorOf(inTargetMode('run_logs', 'head=5'));
    assert.equal(
      unknown.message,
      'The query parameter "head" is not supported for target run_logs. Supported: tail.',
    );
  });
});
