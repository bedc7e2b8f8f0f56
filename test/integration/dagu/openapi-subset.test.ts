// The Dagu REST subset the gateway consumes (openapi/dagu-subset.yaml), checked against the real Dagu:
// a Dagu upgrade that drops or retypes a field the gateway reads fails here, not in production.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { daguApi, getTestDagu, type TestDagu } from '../../support/dagu.ts';

interface OpenApi {
  components: { schemas: Record<string, unknown> };
}

const document = parse(
  readFileSync(new URL('../../../openapi/dagu-subset.yaml', import.meta.url), 'utf8'),
) as OpenApi;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'dagu', components: document.components });
const schema = (name: string) => {
  const validate = ajv.getSchema(`dagu#/components/schemas/${name}`);
  assert.ok(validate, `schema ${name} exists`);
  return validate;
};

let dagu: TestDagu;
before(async () => {
  dagu = await getTestDagu();
});
after(async () => {
  await dagu?.stop();
});

async function check(path: string, schemaName: string) {
  const response = await daguApi(dagu, path);
  assert.equal(response.status, 200, `${path}: ${JSON.stringify(response.body)}`);
  const validate = schema(schemaName);
  assert.ok(validate(response.body), `${path} vs ${schemaName}: ${ajv.errorsText(validate.errors)}`);
  return response.body;
}

test('every consumed route answers in the documented shape', async () => {
  const { dags, runs, facts } = dagu.seed;
  const e = encodeURIComponent;
  await check('/dags?perPage=200', 'DagList');
  await check(`/dags/${e(dags.fails)}`, 'DagDetails');
  await check(`/dags/${e(dags.dotted)}/spec`, 'DagSpec');
  await check('/dag-runs', 'DagRunList');
  await check(`/dag-runs/${e(dags.fails)}/${e(runs.fails)}`, 'DagRunDetailsResponse');
  await check(
    `/dag-runs/${e(dags.parent)}/${e(runs.parent)}/sub-dag-runs/${e(runs.childSub)}`,
    'DagRunDetailsResponse',
  );
  await check(`/dag-runs/${e(dags.twoSteps)}/${e(runs.twoStepsFirst)}/log?tail=10`, 'Log');
  await check(
    `/dag-runs/${e(dags.twoSteps)}/${e(runs.twoStepsFirst)}/steps/${e(facts.twoStepsStepNames[0])}/log?stream=stdout&tail=10`,
    'Log',
  );
  if (dagu.generation === 1) await check('/dags/search?q=echo', 'LegacyDagSearch');
});

test('the schemas are not vacuous: a body missing a required field fails', () => {
  const validate = schema('DagRunDetailsResponse');
  assert.equal(validate({ dagRunDetails: { name: 'x', dagRunId: 'y', statusLabel: 'failed' } }), false);
  assert.equal(schema('Log')({ lineCount: 1 }), false);
});
