// The workbook scope over real HTTP, with scopes required of HS256 tokens (AUTH_REQUIRE_SCOPES=always):
// every string the read takes as the workbook target (fields are trimmed, so `"workbook "` too) gets
// the 403 insufficient_scope step-up from a token without `dagu.workbook`, never the read's own
// `unauthorized` tool error; a string that names no target gets the same answer with the scope or
// without; and a token with the scope reads the padded target as the workbook it is.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  bearer,
  claims,
  hs256,
  newSecret,
  postMcp,
  type RawResponse,
  toolCallBody,
} from '../../support/auth-fixtures.ts';
import { connectModern, type TestClient } from '../../support/gateway.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';
import { writeSmallWorkbook } from '../../support/workbook-fixtures.ts';

const SECRET = newSecret();
const workbookDir = mkdtempSync(join(tmpdir(), 'workbook-scope-'));
const workbook = join(workbookDir, 'small.xlsx');

const on = gatewayOnTestDagu(() => ({
  AUTH_JWT_SECRET: SECRET,
  AUTH_REQUIRE_SCOPES: 'always',
  WORKBOOK_ROOTS: workbookDir,
}));

const readerToken = () => hs256(claims('reader', { scope: 'dagu.read' }), SECRET);
const workbookToken = () => hs256(claims('analyst', { scope: 'dagu.read dagu.workbook' }), SECRET);

/** Strings the read takes as `workbook`: whitespace that String.prototype.trim removes around it. */
const WORKBOOK_SPELLINGS = ['workbook', 'workbook ', ' workbook', '\tworkbook\n', '\u00a0workbook\ufeff'];
/** Strings that name no target: the read refuses them as unsupported, whoever calls. */
const NOT_TARGETS = ['Workbook', 'workbooks', 'work book', 'workbook\u200b'];

let scoped: TestClient;
before(async () => {
  await writeSmallWorkbook(workbook);
  scoped = await connectModern(on.gateway.mcpUrl, bearer(workbookToken()));
});
after(() => scoped?.close());

const read = (token: string, target: string): Promise<RawResponse> =>
  postMcp(on.gateway.mcpUrl, bearer(token), toolCallBody({ target, path: workbook }));

/** The JSON-RPC result of a 200 answer, sent as JSON or as one server-sent event. */
function resultOf(response: RawResponse): Record<string, unknown> {
  assert.equal(response.status, 200, response.text);
  const json = response.text.startsWith('{')
    ? response.text
    : response.text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length))
        .join('');
  return (JSON.parse(json) as { result: Record<string, unknown> }).result;
}

test('a token without dagu.workbook gets one 403 step-up for every spelling the read takes as workbook', async () => {
  const answers = [];
  for (const target of WORKBOOK_SPELLINGS) {
    const response = await read(readerToken(), target);
    answers.push({
      target,
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: response.json(),
    });
  }
  const [first] = answers;
  assert.equal(first?.status, 403);
  assert.equal(
    first.challenge,
    'Bearer realm="dagu-mcp-gateway", scope="dagu.read dagu.workbook", error="insufficient_scope"',
  );
  assert.equal(first.body.code, 'unauthorized');
  for (const answer of answers) {
    assert.deepEqual({ ...answer, target: first.target }, first, JSON.stringify(answer.target));
  }
  const refusals = on.gateway.auditLines().filter((line) => line.reason === 'insufficient_scope');
  assert.equal(refusals.length, WORKBOOK_SPELLINGS.length);
  assert.ok(refusals.every((line) => line.identity === 'reader' && line.http_status === 403));
});

test('a string that names no target gets the same unsupported_read_target answer with dagu.workbook or without', async () => {
  for (const target of NOT_TARGETS) {
    const without = await read(readerToken(), target);
    const withScope = await read(workbookToken(), target);
    assert.equal(without.text, withScope.text, JSON.stringify(target));
    const result = resultOf(without) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent?.code, 'unsupported_read_target', JSON.stringify(target));
    assert.equal(result.structuredContent?.field, 'target');
  }
});

test('with dagu.workbook, every spelling the read takes as workbook reads the workbook', async () => {
  for (const target of WORKBOOK_SPELLINGS) {
    const result = await scoped.callTool({ target, path: workbook });
    assert.notEqual(
      result.isError,
      true,
      `${JSON.stringify(target)}: ${JSON.stringify(result.structuredContent)}`,
    );
    assert.equal(result.structuredContent?.target, 'workbook');
    const data = result.structuredContent?.data as { sheets: Array<{ name: string; row_count: number }> };
    assert.deepEqual(
      data.sheets.map((sheet) => [sheet.name, sheet.row_count]),
      [['Data', 2]],
    );
  }
});
