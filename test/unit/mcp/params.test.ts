/** Request params checked against a JSON Schema before a handler runs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { paramsSchema } from '../../../src/mcp/params.ts';

test('the params schema accepts what the JSON Schema allows and reports what it does not', async () => {
  const { params } = paramsSchema<{ level: string }>({
    type: 'object',
    properties: { level: { type: 'string', enum: ['debug', 'info'] } },
    required: ['level'],
  });
  const good = await params['~standard'].validate({ level: 'info' });
  assert.deepEqual(good, { value: { level: 'info' } });
  const bad = await params['~standard'].validate({ level: 'loud' });
  assert.ok('issues' in bad && bad.issues !== undefined && bad.issues.length > 0);
  const missing = await params['~standard'].validate({});
  assert.ok('issues' in missing && missing.issues !== undefined && missing.issues.length > 0);
});
