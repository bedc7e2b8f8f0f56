import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HealthAnswer } from '../../../src/dagu/detect.ts';
import { type AskHealth, createDialectFinder } from '../../../src/dagu/dialect-finder.ts';
import { DaguError } from '../../../src/dagu/errors.ts';

const json = (version: string, status = 'healthy'): HealthAnswer => ({
  status: 200,
  json: { status, version },
});
const DAGU_2: Record<string, HealthAnswer> = { '/api/v1': json('v2.15.1'), '/api/v2': { status: 200 } };
const DAGU_1: Record<string, HealthAnswer> = { '/api/v1': json('1.30.3'), '/api/v2': json('1.30.3') };

/** A scripted Dagu behind the health routes: swap it, or make it unreachable. */
function scripted(initial: Record<string, HealthAnswer> | 'down') {
  let dagu = initial;
  const asked: string[] = [];
  const ask: AskHealth = async (apiBase) => {
    asked.push(apiBase);
    if (dagu === 'down') {
      throw new DaguError('unreachable', 'Dagu is unreachable.', {
        cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
      });
    }
    return dagu[apiBase] ?? { status: 404 };
  };
  return { ask, asked, set: (next: typeof dagu) => (dagu = next) };
}

const signal = () => AbortSignal.timeout(1000);

test('auto: the dialect is found once on first use, then reused', async () => {
  const dagu = scripted(DAGU_2);
  const finder = createDialectFinder('auto', dagu.ask);
  assert.equal(finder.known, undefined);
  assert.deepEqual(await finder.resolve(), { apiBase: '/api/v1', generation: 2 });
  await finder.resolve();
  assert.deepEqual(dagu.asked, ['/api/v1']);
});

test('inUse: the dialect resolve gives without asking Dagu, only while it is known and trusted', async () => {
  const dagu = scripted(DAGU_2);
  const auto = createDialectFinder('auto', dagu.ask);
  assert.equal(auto.inUse, undefined, 'nothing found yet');
  await auto.resolve();
  assert.deepEqual(auto.inUse, { apiBase: '/api/v1', generation: 2 });
  auto.distrust();
  assert.equal(auto.inUse, undefined, 'a Dagu that did not answer is asked again');
  assert.deepEqual(auto.known, { apiBase: '/api/v1', generation: 2 }, 'while the last one found stays known');
  await auto.resolve();
  assert.deepEqual(dagu.asked, ['/api/v1', '/api/v1']);

  const explicit = createDialectFinder('/api/v2', dagu.ask);
  assert.deepEqual(explicit.inUse, { apiBase: '/api/v2', generation: 1 });
  explicit.distrust();
  assert.deepEqual(
    explicit.inUse,
    { apiBase: '/api/v2', generation: 1 },
    'an explicit base is never distrusted',
  );
});

test('auto: concurrent first uses share one detection', async () => {
  const dagu = scripted(DAGU_1);
  const finder = createDialectFinder('auto', dagu.ask);
  await Promise.all([finder.resolve(), finder.resolve(), finder.resolve()]);
  assert.deepEqual(dagu.asked, ['/api/v1'], 'the version on /api/v1/health (1.30.3) decides');
  assert.deepEqual(finder.known, { apiBase: '/api/v2', generation: 1 });
});

test('auto: after Dagu was unreachable the dialect is found again (a 1.x came back as a 2.x)', async () => {
  const dagu = scripted(DAGU_1);
  const finder = createDialectFinder('auto', dagu.ask);
  assert.equal((await finder.probe(signal())).apiBase, '/api/v2');
  dagu.set('down');
  const down = await finder.probe(signal());
  assert.deepEqual(down, { reachable: false, detail: 'Dagu is unreachable. (ECONNREFUSED)' });
  await assert.rejects(finder.resolve(), DaguError);
  dagu.set(DAGU_2);
  const back = await finder.probe(signal());
  assert.deepEqual(back, { reachable: true, version: 'v2.15.1', apiBase: '/api/v1', generation: 2 });
  assert.deepEqual(await finder.resolve(), { apiBase: '/api/v1', generation: 2 });
});

test('auto: a Dagu replaced by the other generation while reachable is noticed by the next probe', async () => {
  const dagu = scripted(DAGU_2);
  const finder = createDialectFinder('auto', dagu.ask);
  await finder.resolve();
  dagu.set(DAGU_1);
  assert.equal((await finder.probe(signal())).apiBase, '/api/v2');
  assert.equal(finder.known?.generation, 1);
});

test('auto: something that is not Dagu is reachable but unusable, and reads say why', async () => {
  const dagu = scripted({ '/api/v1': { status: 200 } });
  const finder = createDialectFinder('auto', dagu.ask);
  const probed = await finder.probe(signal());
  assert.equal(probed.reachable, true);
  assert.match(probed.problem ?? '', /is DAGU_URL the base URL of a Dagu server\?/);
  await assert.rejects(finder.resolve(), (error: unknown) => {
    assert.ok(error instanceof DaguError);
    assert.equal(error.kind, 'unreachable');
    assert.match(error.message, /^Dagu's REST API was not found: /);
    return true;
  });
});

test('an unhealthy Dagu is not reachable, with the reason and its version', async () => {
  const finder = createDialectFinder('auto', scripted({ '/api/v1': json('v2.15.1', 'unhealthy') }).ask);
  assert.deepEqual(await finder.probe(signal()), {
    reachable: false,
    detail: 'Dagu reports itself unhealthy',
    version: 'v2.15.1',
    apiBase: '/api/v1',
    generation: 2,
  });
});

test('explicit base: used as given without detection; the probe says when it does not fit', async () => {
  const dagu = scripted(DAGU_2);
  const fits = createDialectFinder('/api/v1', dagu.ask);
  assert.deepEqual(fits.known, { apiBase: '/api/v1', generation: 2 });
  assert.deepEqual(await fits.resolve(), { apiBase: '/api/v1', generation: 2 });
  assert.deepEqual(dagu.asked, []);
  assert.equal((await fits.probe(signal())).problem, undefined);

  const wrong = createDialectFinder('/api/v2', dagu.ask);
  const probed = await wrong.probe(signal());
  assert.equal(probed.reachable, true);
  assert.equal(probed.apiBase, '/api/v2');
  assert.match(
    probed.problem ?? '',
    /^DAGU_API_BASE=\/api\/v2 does not fit: .*This Dagu \(v2\.15\.1\) serves \/api\/v1\./,
  );
  assert.deepEqual(
    await wrong.resolve(),
    { apiBase: '/api/v2', generation: 1 },
    'an explicit base still wins',
  );

  const onOld = createDialectFinder('/api/v1', scripted(DAGU_1).ask);
  assert.match(
    (await onOld.probe(signal())).problem ?? '',
    /^DAGU_API_BASE=\/api\/v1 is the REST base of Dagu 2\.x, but this Dagu reports 1\.30\.3, which serves \/api\/v2\./,
  );
});

test('auto: a first probe reads the health route once when the detection already read it under the dialect found', async () => {
  const dagu = scripted(DAGU_2);
  const probed = await createDialectFinder('auto', dagu.ask).probe(signal());
  assert.equal(probed.reachable, true);
  assert.equal(probed.version, 'v2.15.1');
  assert.deepEqual(dagu.asked, ['/api/v1']);
});
