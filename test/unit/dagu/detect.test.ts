import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  detectDialect,
  explicitBaseMismatch,
  generationOf,
  generationOfVersion,
  type HealthAnswer,
} from '../../../src/dagu/detect.ts';

const json = (version: unknown): HealthAnswer => ({ status: 200, json: { status: 'healthy', version } });
const html: HealthAnswer = { status: 200 };
const missing: HealthAnswer = { status: 404 };

/** The health answers of each Dagu as measured (v2.15.1 and 1.30.3 at 03:30 UTC). */
const DAGU_2 = { '/api/v1': json('v2.15.1'), '/api/v2': html };
const DAGU_1 = { '/api/v1': json('1.30.3'), '/api/v2': json('1.30.3') };

const asking = (answers: Record<string, HealthAnswer>) => {
  const asked: string[] = [];
  return {
    asked,
    ask: async (base: string) => {
      asked.push(base);
      return answers[base] ?? missing;
    },
  };
};

test('versions and bases map to their generation', () => {
  assert.equal(generationOfVersion('v2.15.1'), 2);
  assert.equal(generationOfVersion('2.0.0'), 2);
  assert.equal(generationOfVersion('1.30.3'), 1);
  assert.equal(generationOfVersion('dev'), undefined);
  assert.equal(generationOfVersion(undefined), undefined);
  assert.equal(generationOf('/api/v2'), 1);
  assert.equal(generationOf('/api/v1'), 2);
  assert.equal(generationOf('/dagu/api/v2/'), 1);
});

test('Dagu 2.x: /api/v1 from the version on /api/v1/health, one request', async () => {
  const dagu = asking(DAGU_2);
  assert.deepEqual(await detectDialect(dagu.ask), {
    found: true,
    dialect: { apiBase: '/api/v1', generation: 2 },
    version: 'v2.15.1',
    // The answer under the dialect's own base, for the readiness probe to use.
    answer: DAGU_2['/api/v1'],
  });
  assert.deepEqual(dagu.asked, ['/api/v1']);
});

test('Dagu 1.30: /api/v2, although its legacy /api/v1/health answers too', async () => {
  assert.deepEqual(await detectDialect(asking(DAGU_1).ask), {
    found: true,
    dialect: { apiBase: '/api/v2', generation: 1 },
    version: '1.30.3',
    // Only /api/v1/health was read: nothing under /api/v2 to hand on.
    answer: undefined,
  });
});

test('a development build (no release version): JSON on /api/v2/health means 1.x, HTML means 2.x', async () => {
  const dev1 = await detectDialect(asking({ '/api/v1': json('dev'), '/api/v2': json('dev') }).ask);
  assert.deepEqual(dev1.found && dev1.dialect, { apiBase: '/api/v2', generation: 1 });
  const dev2 = await detectDialect(asking({ '/api/v1': json('dev'), '/api/v2': html }).ask);
  assert.deepEqual(dev2.found && dev2.dialect, { apiBase: '/api/v1', generation: 2 });
  const only2 = await detectDialect(asking({ '/api/v2': json('dev') }).ask);
  assert.deepEqual(only2.found && only2.dialect, { apiBase: '/api/v2', generation: 1 });
});

test('something that is not Dagu is not found, with the reason', async () => {
  const result = await detectDialect(asking({ '/api/v1': html }).ask);
  assert.equal(result.found, false);
  assert.match(
    result.found ? '' : result.reason,
    /no JSON under \/api\/v1 \(HTTP 200\) or \/api\/v2 \(HTTP 404\): is DAGU_URL the base URL of a Dagu server\?/,
  );
});

test('an unreachable Dagu: the error of the first request propagates', async () => {
  await assert.rejects(
    detectDialect(async () => {
      throw new Error('ECONNREFUSED');
    }),
    /ECONNREFUSED/,
  );
});

test('an explicit base that does not fit the Dagu found says why and what fits', async () => {
  const on2 = await detectDialect(asking(DAGU_2).ask);
  const on1 = await detectDialect(asking(DAGU_1).ask);
  assert.equal(explicitBaseMismatch('/api/v1', DAGU_2['/api/v1'], on2), undefined);
  assert.equal(explicitBaseMismatch('/api/v2', DAGU_1['/api/v2'], on1), undefined);
  assert.equal(
    explicitBaseMismatch('/api/v2', DAGU_2['/api/v2'], on2),
    "DAGU_API_BASE=/api/v2 does not fit: Dagu's health route there answers HTTP 200 without JSON. This Dagu (v2.15.1) serves /api/v1. Unset DAGU_API_BASE (auto) or set the base this Dagu serves.",
  );
  assert.equal(
    explicitBaseMismatch('/api/v1', DAGU_1['/api/v1'], on1),
    'DAGU_API_BASE=/api/v1 is the REST base of Dagu 2.x, but this Dagu reports 1.30.3, which serves /api/v2. Unset DAGU_API_BASE (auto) or set the base this Dagu serves.',
  );
  assert.equal(
    explicitBaseMismatch('/api/v1', json('dev')),
    undefined,
    'an unknown version is given the benefit of the doubt',
  );
});
