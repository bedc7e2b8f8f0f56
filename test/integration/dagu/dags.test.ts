// dags, dag and dag_spec against the real Dagu (test/support/dagu.ts), handlers called directly.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DaguClient } from '../../../src/dagu/types.ts';
import { type DaguInstance, daguApi, getTestDagu, startDagu, type TestDagu } from '../../support/dagu.ts';
import {
  clientFor,
  type Data,
  onlyDags,
  type Reader,
  RFC3339_MS,
  readerFor,
} from '../../support/dagu-harness.ts';

let dagu: TestDagu;
let client: DaguClient;
let reader: Reader;

before(async () => {
  dagu = await getTestDagu();
  client = clientFor(dagu);
  reader = readerFor(client);
});
after(async () => {
  await client?.close();
  await dagu?.stop();
});

type Item = Data & { name: string };
const itemsOf = (data: Data) => data.items as Item[];

describe('dags', () => {
  it('lists every seeded DAG with name, spec URI and suspended, plus extras', async () => {
    const { data } = await reader.read({ target: 'dags', query: 'perPage=200' });
    const items = itemsOf(data);
    const names = items.map((item) => item.name);
    for (const name of Object.values(dagu.seed.dags)) assert.ok(names.includes(name), name);
    for (const item of items) {
      assert.equal(typeof item.name, 'string');
      assert.equal(item.uri, `dagu://dags/${item.name}/spec`);
      assert.equal(item.suspended, item.name === dagu.seed.dags.suspended, item.name);
    }
    const dotted = items.find((item) => item.name === dagu.seed.dags.dotted);
    assert.ok(dotted);
    const dottedRun = dotted.latestRun as Data;
    assert.deepEqual(dotted, {
      name: 'dotted.name',
      uri: 'dagu://dags/dotted.name/spec',
      suspended: false,
      labels: ['alpha'],
      latestRun: {
        dagRunId: dagu.seed.runs.dotted,
        status: 4,
        statusLabel: 'succeeded',
        startedAt: dottedRun.startedAt,
        finishedAt: dottedRun.finishedAt,
      },
    });
    assert.match(String(dottedRun.startedAt), RFC3339_MS);
    const never = items.find((item) => item.name === dagu.seed.dags.neverRan);
    assert.deepEqual(never, {
      name: 'never-ran',
      uri: 'dagu://dags/never-ran/spec',
      suspended: false,
      description: 'A DAG that never ran',
    });
    const twoSteps = items.find((item) => item.name === dagu.seed.dags.twoSteps);
    assert.ok(twoSteps);
    assert.equal((twoSteps.latestRun as Data).dagRunId, dagu.seed.runs.twoStepsSecond);
    assert.deepEqual(data.pagination, {
      totalRecords: items.length,
      currentPage: 1,
      totalPages: 1,
      nextPage: 1,
      prevPage: 1,
    });
    assert.doesNotMatch(JSON.stringify(data), new RegExp(dagu.home || '/nonexistent'));
  });

  it("passes page and perPage through and returns Dagu's pagination", async () => {
    const all = itemsOf((await reader.read({ target: 'dags', query: 'perPage=200' })).data).map(
      (item) => item.name,
    );
    const { data } = await reader.read({ target: 'dags', query: 'page=2&perPage=1' });
    assert.deepEqual(
      itemsOf(data).map((item) => item.name),
      [all[1]],
    );
    assert.deepEqual(data.pagination, {
      totalRecords: all.length,
      currentPage: 2,
      totalPages: all.length,
      nextPage: 3,
      prevPage: 1,
    });
    const beyond = await reader.read({ target: 'dags', query: `page=${all.length + 5}&perPage=5` });
    assert.deepEqual(itemsOf(beyond.data), []);
  });

  it('filters by name (case-insensitive substring), sorts and orders', async () => {
    const byName = await reader.read({ target: 'dags', query: 'name=DOTTED' });
    assert.deepEqual(
      itemsOf(byName.data).map((item) => item.name),
      ['dotted.name'],
    );
    const desc = await reader.read({ target: 'dags', query: 'perPage=200&sort=name&order=desc' });
    const names = itemsOf(desc.data).map((item) => item.name);
    assert.deepEqual(
      names,
      [...names].sort((a, b) => b.localeCompare(a, 'en', { sensitivity: 'base' })),
    );
  });

  it('filters by one label and by several labels (all must match)', async () => {
    const one = await reader.read({ target: 'dags', query: 'labels=alpha' });
    assert.deepEqual(
      itemsOf(one.data)
        .map((item) => item.name)
        .sort(),
      ['dotted.name', 'labelled'],
    );
    const both = await reader.read({ target: 'dags', query: 'labels=alpha,beta' });
    assert.deepEqual(
      itemsOf(both.data).map((item) => item.name),
      ['labelled'],
    );
    assert.deepEqual(itemsOf(both.data)[0]?.labels, ['alpha', 'beta']);
    assert.equal((both.data.pagination as Data).totalRecords, 1);
    const upper = await reader.read({ target: 'dags', query: 'labels=BETA,Alpha' });
    assert.deepEqual(
      itemsOf(upper.data).map((item) => item.name),
      ['labelled'],
    );
    const none = await reader.read({ target: 'dags', query: 'labels=alpha,nope' });
    assert.deepEqual(itemsOf(none.data), []);
  });

  it('the URI form gives the same data', async () => {
    const target = await reader.read({ target: 'dags', query: 'labels=alpha,beta' });
    const uri = await reader.read({ uri: 'dagu://dags?labels=alpha,beta' });
    assert.deepEqual(uri.data, target.data);
    assert.equal(uri.request.uri, 'dagu://dags?labels=alpha,beta');
  });

  it('lists only readable DAGs when access is restricted, with pagination over them', async () => {
    const access = onlyDags(dagu.seed.dags.fails, dagu.seed.dags.dotted);
    const { data } = await reader.read({ target: 'dags', query: 'perPage=1' }, access);
    assert.deepEqual(
      itemsOf(data).map((item) => item.name),
      ['dotted.name'],
    );
    assert.deepEqual(data.pagination, {
      totalRecords: 2,
      currentPage: 1,
      totalPages: 2,
      nextPage: 2,
      prevPage: 1,
    });
  });

  it('refuses a perPage above 200 at the input (Dagu would silently cap it)', async () => {
    const error = await reader.fail({ target: 'dags', query: 'perPage=201' });
    assert.equal(error.code, 'invalid_tool_input');
    assert.equal(error.field, 'query');
  });
});

describe('dag', () => {
  it('returns name, spec URI, suspended and the latest run of a DAG that ran', async () => {
    const { data } = await reader.read({ target: 'dag', name: dagu.seed.dags.fails });
    const latest = data.latestRun as Data;
    assert.deepEqual(data, {
      name: 'fails',
      specUri: 'dagu://dags/fails/spec',
      suspended: false,
      latestRun: {
        dagRunId: dagu.seed.runs.fails,
        status: 2,
        statusLabel: 'failed',
        startedAt: latest.startedAt,
        finishedAt: latest.finishedAt,
      },
    });
    assert.match(String(latest.startedAt), RFC3339_MS);
    assert.match(String(latest.finishedAt), RFC3339_MS);
  });

  it('has no latestRun for a DAG that never ran', async () => {
    const { data } = await reader.read({ target: 'dag', name: dagu.seed.dags.neverRan });
    assert.deepEqual(data, {
      name: 'never-ran',
      specUri: 'dagu://dags/never-ran/spec',
      suspended: false,
      description: 'A DAG that never ran',
    });
  });

  it('a DAG suspended through Dagu reads suspended: true', async () => {
    const { data } = await reader.read({ target: 'dag', name: dagu.seed.dags.suspended });
    assert.deepEqual(data, {
      name: 'suspended',
      specUri: 'dagu://dags/suspended/spec',
      suspended: true,
      description: 'Suspended by the seed',
    });
  });

  it('reads a dotted name and reports labels; the latest run is the newest', async () => {
    const dotted = await reader.read({ target: 'dag', name: dagu.seed.dags.dotted });
    assert.equal(dotted.data.specUri, 'dagu://dags/dotted.name/spec');
    assert.deepEqual(dotted.data.labels, ['alpha']);
    const twoSteps = await reader.read({ target: 'dag', name: dagu.seed.dags.twoSteps });
    assert.equal((twoSteps.data.latestRun as Data).dagRunId, dagu.seed.runs.twoStepsSecond);
  });

  it('an unknown DAG is resource_not_found with close names in details.didYouMean', async () => {
    const error = await reader.fail({ target: 'dag', name: 'two-stepz' });
    assert.equal(error.code, 'resource_not_found');
    assert.equal(error.message, 'DAG "two-stepz" does not exist.');
    assert.deepEqual(error.details, { didYouMean: ['two-steps'] });
    assert.equal(error.upstreamStatus, 404);
    const far = await reader.fail({ target: 'dag', name: 'completely-different-name' });
    assert.equal(far.code, 'resource_not_found');
    assert.equal(far.details, undefined);
  });

  it('a page far past the end is an empty page, even at the top of the integer range', async () => {
    for (const page of ['1000', '9223372036854775807']) {
      const { data } = await reader.read({ target: 'dags', query: `page=${page}` });
      assert.deepEqual(itemsOf(data), [], page);
    }
  });

  it('a file name is not a DAG name: not found, suggesting the DAG, for dag and dag_spec', async () => {
    for (const target of ['dag', 'dag_spec'] as const) {
      for (const name of [`${dagu.seed.dags.twoSteps}.yaml`, `${dagu.seed.dags.twoSteps}.YML`]) {
        const error = await reader.fail({ target, name });
        assert.equal(error.code, 'resource_not_found', `${target} ${name}`);
        assert.deepEqual(error.details, { didYouMean: [dagu.seed.dags.twoSteps] });
      }
    }
  });

  it('suggestions allow a swap of two letters and only name DAGs the caller may read', async () => {
    const open = await reader.fail({ target: 'dag', name: 'fials' });
    assert.deepEqual(open.details, { didYouMean: ['fails'] });
    const error = await reader.fail({ target: 'dag', name: 'fials' }, onlyDags('fials', 'parent'));
    assert.equal(error.code, 'resource_not_found');
    assert.equal(error.details, undefined);
  });

  it('a DAG the caller may not read is unauthorized, without asking Dagu', async () => {
    const error = await reader.fail({ target: 'dag', name: dagu.seed.dags.fails }, onlyDags('other'));
    assert.equal(error.code, 'unauthorized');
  });
});

describe('dag_spec', () => {
  it('returns the YAML, its mime type and an empty errors array (Dagu sends null)', async () => {
    const raw = await daguApi(dagu, '/dags/dotted.name/spec');
    assert.equal((raw.body as Data).errors, null, 'Dagu answers errors: null');
    const { data, request } = await reader.read({ target: 'dag_spec', name: dagu.seed.dags.dotted });
    assert.deepEqual(data, {
      name: 'dotted.name',
      mimeType: 'application/yaml',
      spec: (raw.body as Data).spec,
      errors: [],
    });
    assert.match(String(data.spec), /echo dotted/);
    assert.equal(request.uri, 'dagu://dags/dotted.name/spec');
  });

  it('returns the definition errors of a broken DAG as strings', async () => {
    const { data } = await reader.read({ target: 'dag_spec', name: dagu.seed.dags.broken });
    const errors = data.errors as string[];
    assert.ok(errors.length > 0);
    assert.ok(errors.every((error) => typeof error === 'string'));
    assert.match(errors.join('\n'), /missing-step/);
  });

  it('an unknown spec is resource_not_found (Dagu 1.x answers HTTP 500 with code not_found)', async () => {
    const raw = await daguApi(dagu, '/dags/never-ra/spec');
    if (dagu.generation === 1) assert.equal(raw.status, 500, 'the 1.x quirk this test guards against');
    const error = await reader.fail({ target: 'dag_spec', name: 'never-ra' });
    assert.equal(error.code, 'resource_not_found');
    assert.deepEqual(error.details, { didYouMean: ['never-ran'] });
    assert.equal(error.upstreamStatus, 404);
  });

  it('URI mode reads the same spec', async () => {
    const target = await reader.read({ target: 'dag_spec', name: dagu.seed.dags.twoSteps });
    const uri = await reader.read({ uri: 'dagu://dags/two-steps/spec' });
    assert.deepEqual(uri.data, target.data);
  });
});

describe('more than 200 DAGs (Dagu caps perPage at 200 silently)', () => {
  let big: DaguInstance;
  let bigClient: DaguClient;
  let bigReader: Reader;
  const COUNT = 205;

  before(async () => {
    big = await startDagu();
    for (let i = 0; i < COUNT; i++) {
      const name = `bulk-${String(i).padStart(3, '0')}`;
      const labels = i % 2 === 0 ? '[even, bulk]' : '[odd, bulk]';
      const key = big.generation === 1 ? 'tags' : 'labels';
      writeFileSync(
        join(big.home, 'dags', `${name}.yaml`),
        `${key}: ${labels}\nsteps:\n  - name: s\n    command: "true"\n`,
      );
    }
    bigClient = clientFor(big);
    bigReader = readerFor(bigClient);
  });
  after(async () => {
    await bigClient?.close();
    await big?.stop();
  });

  it('a page never holds more than 200, and pagination reports the rest', async () => {
    const { data } = await bigReader.read({ target: 'dags', query: 'perPage=200' });
    assert.equal(itemsOf(data).length, 200);
    assert.deepEqual(data.pagination, {
      totalRecords: COUNT,
      currentPage: 1,
      totalPages: 2,
      nextPage: 2,
      prevPage: 1,
    });
    const second = await bigReader.read({ target: 'dags', query: 'perPage=200&page=2' });
    assert.equal(itemsOf(second.data).length, COUNT - 200);
  });

  it('label filtering done by the gateway walks every page', async () => {
    const { data } = await bigReader.read({ target: 'dags', query: 'labels=bulk,even&perPage=200' });
    assert.equal((data.pagination as Data).totalRecords, 103);
    assert.equal(itemsOf(data).length, 103);
    assert.ok(itemsOf(data).some((item) => item.name === 'bulk-204'));
  });

  it('did-you-mean finds names beyond the first page', async () => {
    const error = await bigReader.fail({ target: 'dag', name: 'bulk-204x' });
    const suggestions = error.details?.didYouMean as string[] | undefined;
    assert.ok(suggestions?.includes('bulk-204'), JSON.stringify(error.details));
  });
});
