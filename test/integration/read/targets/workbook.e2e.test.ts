// The workbook target through both real MCP clients: profile, echo, errors and the password rule.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import officeCrypto from 'officecrypto-tool';
import { CONNECTORS, type RunningGateway, startGateway, type TestClient } from '../../../support/gateway.ts';
import { fixtureDir, writeSmallWorkbook } from '../../../support/workbook-fixtures.ts';

const PASSWORD = ' s3cret pw ';
let gateway: RunningGateway;
let dir: string;
let cleanup: () => Promise<void>;

before(async () => {
  ({ dir, cleanup } = await fixtureDir('workbook-e2e'));
  await writeSmallWorkbook(join(dir, 'cities.xlsx'));
  const encrypted = await officeCrypto.encrypt(readFileSync(join(dir, 'cities.xlsx')), {
    password: PASSWORD,
    type: 'standard',
  });
  writeFileSync(join(dir, 'locked.xlsx'), encrypted);
  writeFileSync(join(dir, 'notes.txt'), 'not a workbook');
  // Workbook reads never reach Dagu.
  gateway = await startGateway({ DAGU_URL: 'http://127.0.0.1:9', WORKBOOK_ROOTS: dir });
});
after(async () => {
  await gateway?.close();
  await cleanup?.();
});

for (const era of ['modern', 'legacy'] as const) {
  describe(`workbook through the ${era} client`, () => {
    let client: TestClient;
    before(async () => {
      client = await CONNECTORS[era](gateway.mcpUrl);
    });
    after(async () => {
      await client?.close();
    });

    test('a profile with the path echoed and no uri', async () => {
      const path = join(dir, 'cities.xlsx');
      const result = await client.callTool({ target: 'workbook', path });
      assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
      assert.equal(result.content.length, 1);
      const envelope = result.structuredContent as {
        path: string;
        uri?: string;
        data: Record<string, unknown>;
      };
      assert.equal(envelope.path, path);
      assert.equal(envelope.uri, undefined);
      assert.equal(envelope.data.path, path);
      assert.equal(envelope.data.date_system, '1900');
      const [sheet] = envelope.data.sheets as Array<Record<string, unknown>>;
      assert.equal(sheet?.name, 'Data');
      assert.deepEqual(sheet?.headers, ['city', 'count']);
      assert.deepEqual(sheet?.types, { city: 'string', count: 'integer' });
      assert.equal(sheet?.row_count, 2);
      assert.deepEqual(sheet?.sample, [
        { _row: 2, city: 'Oslo', count: 3 },
        { _row: 3, city: 'Lima', count: 5 },
      ]);
    });

    test('the password: exact, missing, wrong', async () => {
      const path = join(dir, 'locked.xlsx');
      const opened = await client.callTool({ target: 'workbook', path, password: PASSWORD });
      assert.notEqual(opened.isError, true, JSON.stringify(opened.structuredContent));
      for (const password of [undefined, PASSWORD.trim()]) {
        const result = await client.callTool({ target: 'workbook', path, ...(password ? { password } : {}) });
        assert.equal(result.isError, true);
        assert.deepEqual(result.structuredContent, {
          code: 'invalid_tool_input',
          message: 'locked.xlsx: workbook password is missing or incorrect',
          target: 'workbook',
          field: 'password',
        });
      }
    });

    test('wrong extension, missing file, outside the roots, not a workbook', async () => {
      const cases: Array<[string, string, string | undefined]> = [
        [join(dir, 'notes.txt'), 'invalid_tool_input', 'path'],
        [join(dir, 'absent.xlsx'), 'resource_not_found', undefined],
        ['/etc/outside.xlsx', 'invalid_tool_input', 'path'],
      ];
      writeFileSync(join(dir, 'fake.xlsx'), 'plain text named .xlsx');
      cases.push([join(dir, 'fake.xlsx'), 'resource_unavailable', undefined]);
      for (const [path, code, field] of cases) {
        const result = await client.callTool({ target: 'workbook', path });
        assert.equal(result.isError, true, path);
        assert.equal(
          result.structuredContent?.code,
          code,
          `${path}: ${JSON.stringify(result.structuredContent)}`,
        );
        assert.equal(result.structuredContent?.field, field, path);
      }
    });
  });
}
