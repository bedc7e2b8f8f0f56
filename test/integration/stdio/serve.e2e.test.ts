// `dagu-mcp-gateway --stdio` for local MCP hosts, through both real MCP clients' stdio transports
// against the real Dagu: the same reads, the same contract errors, audit records naming the local
// caller, and nothing but the protocol on stdout (logs and audit on stderr).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Stream } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { clientSnippets } from '../../../scripts/client-snippets.ts';
import { BIN, baseEnv, ensureBuilt, folderWithoutDotEnv, ROOT } from '../../support/bin.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import type { ToolResult } from '../../support/gateway.ts';

let dagu: TestDagu;
before(async () => {
  ensureBuilt();
  dagu = await getTestDagu();
});
after(() => dagu?.stop());

interface StdioSession {
  callTool(args: unknown): Promise<ToolResult>;
  readResource(uri: string): Promise<{ contents: Array<{ uri: string; text?: string }> }>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  close(): Promise<void>;
  stderr(): string;
}

const CLIENT_INFO = { name: 'stdio-tests', version: '2.0.0' };

/**
 * The README's "Claude Desktop from a clone" entry, for this Dagu and this clone: exactly the command
 * and arguments a host would start (`node <clone>/dist/main.js --stdio --dagu-url …`).
 */
function cloneEntry(): { command: string; args: string[] } {
  const snippet = clientSnippets({ mcpUrl: 'http://unused/mcp', daguUrl: dagu.url, clonePath: ROOT }).find(
    (entry) => entry.host.startsWith('Claude Desktop from a clone'),
  );
  const config = JSON.parse(snippet?.text ?? '{}') as {
    mcpServers: { dagu: { command: string; args: string[] } };
  };
  return config.mcpServers.dagu;
}

async function open(
  era: 'modern' | 'legacy',
  node: { args?: string[]; env?: Record<string, string>; defaultLogLevel?: boolean } = {},
): Promise<StdioSession> {
  const entry = cloneEntry();
  assert.equal(entry.command, 'node');
  assert.equal(entry.args[0], BIN);
  const params = {
    command: entry.command,
    args: [...(node.args ?? []), ...entry.args, '--dagu-api-base', dagu.apiBase],
    env: baseEnv({ ...(node.defaultLogLevel === true ? {} : { LOG_LEVEL: 'info' }), ...node.env }),
    cwd: folderWithoutDotEnv(),
    stderr: 'pipe' as const,
  };
  const transport = era === 'modern' ? new StdioClientTransport(params) : new LegacyStdioTransport(params);
  let stderr = '';
  (transport.stderr as Stream).on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client =
    era === 'modern'
      ? new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
      : new LegacyClient(CLIENT_INFO);
  await client.connect(transport);
  return {
    callTool: async (args) =>
      (await client.callTool({
        name: 'dagu_read',
        arguments: args as Record<string, unknown>,
      })) as ToolResult,
    readResource: async (uri) =>
      (await client.readResource({ uri })) as { contents: Array<{ uri: string; text?: string }> },
    listTools: async () => (await client.listTools()) as { tools: Array<{ name: string }> },
    close: () => client.close(),
    stderr: () => stderr,
  };
}

for (const era of ['modern', 'legacy'] as const) {
  describe(`--stdio through the ${era === 'modern' ? 'v2 (2026-07-28)' : 'v1 (initialize era)'} client`, () => {
    let session: StdioSession;
    before(async () => {
      session = await open(era);
    });
    after(() => session?.close());

    test('lists dagu_read and reads a run, its resource and the contract errors from the real Dagu', async () => {
      const { tools } = await session.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['dagu_read'],
      );
      const name = dagu.seed.dags.fails;
      const dagRunId = dagu.seed.runs.fails;
      const run = await session.callTool({ target: 'run', name, dagRunId });
      assert.equal(run.isError, undefined, JSON.stringify(run));
      assert.equal(run.structuredContent?.target, 'run');
      assert.equal(run.structuredContent?.uri, `dagu://runs/${name}/${dagRunId}`);
      assert.equal((run.structuredContent?.data as { dagRunId?: string } | undefined)?.dagRunId, dagRunId);
      assert.equal(run.content[0]?.text, 'Dagu read completed.');

      const resource = await session.readResource(`dagu://runs/${name}/${dagRunId}`);
      assert.equal(
        (JSON.parse(resource.contents[0]?.text ?? '{}') as { dagRunId?: string }).dagRunId,
        dagRunId,
      );

      const missing = await session.callTool({ target: 'run', name });
      assert.equal(missing.isError, true);
      assert.equal(missing.structuredContent?.code, 'invalid_tool_input');
      assert.equal(missing.structuredContent?.field, 'dagRunId');
      const unknown = await session.callTool({ target: 'run', name: 'no-such-dag', dagRunId: 'latest' });
      assert.equal(unknown.structuredContent?.code, 'resource_not_found');
    });

    test('audits each call as the local stdio caller on stderr; stderr is JSON lines, stdout only protocol', async () => {
      // The client parses stdout as JSON-RPC: any other line there would have failed the reads above.
      const deadline = Date.now() + 5000;
      while (!session.stderr().includes('"outcome":"resource_not_found"') && Date.now() < deadline)
        await new Promise((done) => setTimeout(done, 25));
      const lines = session
        .stderr()
        .split('\n')
        .filter((line) => line !== '');
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const calls = records.filter((record) => record.event === 'mcp.tool_call');
      assert.deepEqual(
        calls.map((call) => call.outcome),
        ['ok', 'invalid_tool_input', 'resource_not_found'],
      );
      for (const call of calls) {
        assert.equal(call.identity, 'stdio');
        assert.equal(call.identity_kind, 'local');
        assert.equal(call.client_name, CLIENT_INFO.name);
        assert.equal(call.client_version, CLIENT_INFO.version);
      }
      assert.ok(records.some((record) => record.event === 'mcp.resource_read' && record.outcome === 'ok'));
      // No HTTP listener, no bearer: the anonymous-HTTP warning and its AUTH_* advice do not apply.
      assert.doesNotMatch(session.stderr(), /NO AUTHENTICATION|AUTH_API_KEYS_FILE/);
      assert.ok(
        records.some((record) => String(record.msg).startsWith('dagu-mcp-gateway serving MCP on stdio')),
      );
    });

    test('shuts down when the host closes stdin (before the client would signal it)', async () => {
      await session.close();
      const stop = session
        .stderr()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { msg?: string; signal?: string })
        .find((entry) => entry.msg === 'shutting down');
      assert.equal(stop?.signal, 'stdin closed');
    });
  });
}

test('--stdio without LOG_LEVEL writes no info lines to stderr, only the audit records (the host shows stderr)', async () => {
  const session = await open('modern', { defaultLogLevel: true });
  try {
    const read = await session.callTool({ target: 'dags' });
    assert.notEqual(read.isError, true, JSON.stringify(read));
  } finally {
    await session.close();
  }
  const deadline = Date.now() + 5000;
  while (!session.stderr().includes('"event":"mcp.tool_call"') && Date.now() < deadline)
    await new Promise((done) => setTimeout(done, 25));
  const records = session
    .stderr()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { level?: number; event?: string; msg?: string });
  assert.deepEqual(
    records.filter((record) => record.level !== undefined && record.level < 40).map((record) => record.msg),
    [],
  );
  assert.equal(records.filter((record) => record.event === 'mcp.tool_call').length, 1);
});

test('--stdio serves from the gateway core alone: Fastify and the HTTP plugins are never loaded', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'stdio-modules-')), 'modules.txt');
  const session = await open('modern', {
    args: ['--import', join(ROOT, 'test/support/record-modules.mjs')],
    env: { RECORD_MODULES_FILE: file },
  });
  const result = await session.callTool({ target: 'dags' });
  await session.close();
  assert.notEqual(result.isError, true);
  const modules = readFileSync(file, 'utf8').split('\n');
  // The recording works: the core and the MCP server it serves were loaded through it.
  assert.ok(modules.some((url) => url.endsWith('/dist/gateway-core.js')));
  assert.ok(modules.some((url) => url.includes('/node_modules/@modelcontextprotocol/server/')));
  assert.deepEqual(
    modules.filter((url) =>
      /\/node_modules\/(fastify|@fastify\/[^/]+)\/|\/dist\/(app|http\/[^/]+)\.js$/.test(url),
    ),
    [],
  );
});
