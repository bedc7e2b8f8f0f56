// Prompts and logging end to end against the seeded real Dagu, through both MCP clients. A prompt reads
// nothing itself: what is tested is that every dagu_read call it tells the agent to make is a valid
// read that answers the question (the failing step's stderr is reachable from why_did_run_fail), and
// that the allowlist still applies to those reads. Logging: `logging/setLevel` is accepted in the
// initialize era and keeps nothing; on 2026-07-28 the method does not exist and the per-request level
// is accepted; no request ever gets a log notification.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { bearer, newApiKey, writeKeysFile } from '../../support/auth-fixtures.ts';
import { type PromptResult, type TestClient, withClient } from '../../support/gateway.ts';
import { gatewayOnTestDagu } from '../../support/gateway-on-dagu.ts';

const FULL_KEY = newApiKey('full');
const SCOPED_KEY = newApiKey('scoped');

const on = gatewayOnTestDagu(() => ({
  AUTH_API_KEYS_FILE: writeKeysFile([
    { name: 'full', key: FULL_KEY },
    { name: 'two-only', key: SCOPED_KEY, dags: ['two-*'] },
  ]),
}));

const withKey = (era: 'modern' | 'legacy', key: string, use: (client: TestClient) => Promise<void>) =>
  withClient(era, on.gateway.mcpUrl, bearer(key), use);

/** Every `dagu_read {…}` call a prompt's text names, parsed (the shortest `{…}` that is JSON). */
function readCalls(result: PromptResult): Array<Record<string, unknown>> {
  const text = result.messages.map((message) => String(message.content.text ?? '')).join('\n');
  const calls: Array<Record<string, unknown>> = [];
  for (const match of text.matchAll(/dagu_read \{/g)) {
    const start = match.index + 'dagu_read '.length;
    for (let end = text.indexOf('}', start); end !== -1; end = text.indexOf('}', end + 1)) {
      try {
        calls.push(JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>);
        break;
      } catch {
        // a `}` inside a string: keep looking
      }
    }
  }
  return calls;
}

/** Fills the placeholders a prompt leaves for the agent with what the agent would have read first. */
function filled(call: Record<string, unknown>): Record<string, unknown> {
  const { seed } = on.dagu;
  const out = { ...call };
  if (out.stepName === '<step name>') {
    out.stepName = out.name === seed.dags.fails ? seed.facts.failsStepName : seed.facts.twoStepsStepNames[0];
  }
  if (out.dagRunId === '<dagRunId>') out.dagRunId = 'latest';
  if (out.subRunId === '<sub run id>') {
    Object.assign(out, { name: seed.dags.parent, dagRunId: seed.runs.parent, subRunId: seed.runs.childSub });
  }
  return out;
}

const invalidParams = (error: unknown) => {
  assert.equal((error as { code?: number }).code, -32602, String(error));
  return true;
};

for (const era of ['modern', 'legacy'] as const) {
  describe(`prompts (${era} client)`, () => {
    test('prompts/list names the three investigations with their arguments', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        assert.deepEqual(client.serverCapabilities()?.prompts, {});
        const { prompts } = await client.listPrompts();
        assert.deepEqual(
          prompts.map((prompt) => prompt.name),
          ['why_did_run_fail', 'summarize_dag', 'compare_runs'],
        );
        for (const prompt of prompts) assert.ok(prompt.description, `${prompt.name} has a description`);
      });
    });

    test('why_did_run_fail leads to the failing step and its stderr with valid reads', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const { dags, facts } = on.dagu.seed;
        const result = await client.getPrompt('why_did_run_fail', { name: dags.fails });
        const calls = readCalls(result);
        assert.deepEqual(
          calls.map((call) => call.target),
          ['run', 'step_log', 'run_logs', 'dag_spec', 'run'],
        );
        assert.ok(
          calls.every(
            (call) => call.dagRunId === undefined || call.dagRunId === 'latest' || call.target === 'run',
          ),
        );
        const outputs: string[] = [];
        for (const call of calls) {
          const read = await client.callTool(filled(call));
          assert.notEqual(
            read.isError,
            true,
            `${JSON.stringify(call)}: ${JSON.stringify(read.structuredContent)}`,
          );
          outputs.push(JSON.stringify(read.structuredContent));
        }
        assert.ok(outputs[1]!.includes(facts.failsStderr), 'the stderr read holds the error');
        const link = result.messages.find((message) => message.content.type === 'resource_link');
        assert.equal(link?.content.uri, `dagu://runs/${dags.fails}/latest`);
        const resource = await client.readResource(String(link?.content.uri));
        assert.match(String(resource.contents[0]?.text), /"statusLabel":"failed"/);
      });
    });

    test('an explicit run id is used in every call; summarize_dag and compare_runs name valid reads', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        const { dags, runs } = on.dagu.seed;
        const pinned = await client.getPrompt('why_did_run_fail', { name: dags.fails, dagRunId: runs.fails });
        const pinnedCalls = readCalls(pinned).filter((call) => 'dagRunId' in call);
        assert.ok(pinnedCalls.length >= 2, JSON.stringify(pinnedCalls));
        assert.ok(
          pinnedCalls.every((call) => call.dagRunId === runs.fails),
          JSON.stringify(pinnedCalls),
        );
        for (const [name, args] of [
          ['summarize_dag', { name: dags.twoSteps }],
          ['compare_runs', { name: dags.twoSteps, count: '2' }],
        ] as const) {
          const calls = readCalls(await client.getPrompt(name, args));
          assert.ok(calls.length >= 2, name);
          for (const call of calls) {
            const read = await client.callTool(filled(call));
            assert.notEqual(
              read.isError,
              true,
              `${name} ${JSON.stringify(call)}: ${JSON.stringify(read.structuredContent)}`,
            );
          }
        }
        const listed = readCalls(
          await client.getPrompt('compare_runs', { name: dags.twoSteps, count: '2' }),
        )[0]!;
        const runList = await client.callTool(listed);
        assert.equal(
          (runList.structuredContent!.data as { items: unknown[] }).items.length,
          2,
          'count is the limit',
        );
      });
    });

    test('bad prompt requests are Invalid params (-32602)', async () => {
      await withKey(era, FULL_KEY, async (client) => {
        await assert.rejects(client.getPrompt('why_did_run_fail', {}), invalidParams);
        await assert.rejects(client.getPrompt('why_did_run_fail', { name: '  ' }), invalidParams);
        await assert.rejects(client.getPrompt('test_simple_prompt'), invalidParams);
        await assert.rejects(client.getPrompt('compare_runs', { name: 'x', count: '1' }), invalidParams);
        await assert.rejects(client.getPrompt('compare_runs', { name: 'x', count: 'many' }), invalidParams);
        await assert.rejects(client.getPrompt('summarize_dag', { name: 'x', extra: 'y' }), invalidParams);
        await assert.rejects(client.getPrompt('summarize_dag', { name: 5 } as never), invalidParams);
      });
    });

    test('a scoped caller gets the prompt, and the allowlist refuses the reads it names', async () => {
      await withKey(era, SCOPED_KEY, async (client) => {
        const calls = readCalls(
          await client.getPrompt('why_did_run_fail', { name: on.dagu.seed.dags.fails }),
        );
        const read = await client.callTool(filled(calls[0]!));
        assert.equal(read.structuredContent?.code, 'unauthorized');
        const own = readCalls(await client.getPrompt('summarize_dag', { name: on.dagu.seed.dags.twoSteps }));
        assert.notEqual((await client.callTool(own[0]!)).isError, true);
      });
    });
  });
}

describe('logging', () => {
  test('both eras declare the logging capability', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      await withKey(era, FULL_KEY, async (client) => {
        assert.deepEqual(client.serverCapabilities()?.logging, {}, era);
      });
    }
  });

  test('initialize era: setLevel answers {} for each level, -32602 for an unknown one (v1 client)', async () => {
    await withKey('legacy', FULL_KEY, async (client) => {
      for (const level of ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']) {
        assert.deepEqual(await client.setLoggingLevel(level), {}, level);
      }
      await assert.rejects(client.setLoggingLevel('loud'), invalidParams);
    });
  });

  test('initialize era: the v2 client in its default (initialize) mode sets a level too', async () => {
    const client = new Client({ name: 'gateway-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(on.gateway.mcpUrl), {
        requestInit: { headers: bearer(FULL_KEY) },
      }),
    );
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
      assert.deepEqual(await client.setLoggingLevel('warning'), {});
    } finally {
      await client.close();
    }
  });

  const post = async (headers: Record<string, string>, body: unknown) => {
    const response = await fetch(on.gateway.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...bearer(FULL_KEY),
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      text: await response.text(),
    };
  };
  const ENVELOPE = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const toolCall = (id: number, meta?: object) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'dagu_read',
      arguments: { target: 'dag', name: on.dagu.seed.dags.fails },
      ...(meta ? { _meta: meta } : {}),
    },
  });

  test('stateless: no level is kept, and a call after setLevel gets one JSON answer and no log message', async () => {
    const legacy = { 'mcp-protocol-version': '2025-11-25' };
    const set = await post(legacy, {
      jsonrpc: '2.0',
      id: 1,
      method: 'logging/setLevel',
      params: { level: 'debug' },
    });
    assert.deepEqual(JSON.parse(set.text), { result: {}, jsonrpc: '2.0', id: 1 });
    const call = await post(legacy, toolCall(2));
    assert.match(call.type, /^application\/json/, 'a single JSON response: nowhere to put a notification');
    const message = JSON.parse(call.text) as { id: number; result?: unknown; method?: string };
    assert.equal(message.id, 2);
    assert.ok(message.result !== undefined && message.method === undefined);
  });

  test('2026-07-28: logging/setLevel is Method not found; the per-request _meta level is accepted', async () => {
    const modern = { 'mcp-protocol-version': '2026-07-28' };
    const set = await post(
      { ...modern, 'mcp-method': 'logging/setLevel' },
      { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info', _meta: ENVELOPE } },
    );
    assert.equal(JSON.parse(set.text).error.code, -32601);
    const call = await post(
      { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'dagu_read' },
      toolCall(2, { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' }),
    );
    assert.equal(call.status, 200);
    assert.match(call.type, /^application\/json/);
    assert.equal(JSON.parse(call.text).result.structuredContent.target, 'dag');
  });
});
