/**
 * The per-message side channel (src/mcp/request-side-channel.ts): the facts the HTTP route hands the
 * SDK with a message are what that message's handlers read, on both eras' paths and never another
 * message's, even when calls interleave; a message sent without them has none (the handlers then
 * refuse, fail closed: test/unit/mcp/server.test.ts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UNRESTRICTED_ACCESS } from '../../../src/core/access.ts';
import { carryingFacts, factsOf, type McpRequestFacts } from '../../../src/mcp/request-side-channel.ts';
import { createMcpEndpoint } from '../../../src/mcp/server.ts';
import type { CompletionService } from '../../../src/read/completion.ts';
import type { ReadOutcome, ReadService } from '../../../src/read/service.ts';

const facts = (requestId: string): McpRequestFacts => ({
  requestId,
  access: UNRESTRICTED_ACCESS,
  identity: requestId,
  identityKind: 'api_key',
  role: 'viewer',
  protocolVersion: undefined,
  clientName: undefined,
  clientVersion: undefined,
  signal: new AbortController().signal,
});

/** A read service that answers after `turns` event-loop turns (from the arguments) with the caller it was given. */
function callerEchoingReads(): ReadService {
  const answer = async (turns: number, caller: string | undefined): Promise<ReadOutcome> => {
    for (let i = 0; i < turns; i++) await nextTurn();
    return { ok: false, error: { code: 'invalid_tool_input', message: `caller ${caller}` }, facts: {} };
  };
  return {
    read: (raw, call) => answer((raw as { limit: number }).limit, call.caller),
    readUri: (_uri, call) => answer(1, call.caller),
  };
}

const NO_COMPLETIONS: CompletionService = {
  complete: async () => {
    throw new Error('not asked for');
  },
};

const LEGACY_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};
const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'dagu_read',
};
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'unit', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A `dagu_read` call answered after `turns` turns, as `requestId` calls; what the tool's text said. */
async function callAs(
  endpoint: ReturnType<typeof createMcpEndpoint>,
  era: 'legacy' | 'modern',
  requestId: string,
  turns: number,
): Promise<string> {
  const params = {
    name: 'dagu_read',
    arguments: { target: 'dags', limit: turns },
    ...(era === 'modern' ? { _meta: MODERN_META } : {}),
  };
  const body = { jsonrpc: '2.0', id: requestId, method: 'tools/call', params };
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: era === 'modern' ? MODERN_HEADERS : LEGACY_HEADERS,
    body: JSON.stringify(body),
  });
  const response = await endpoint.fetch(request, {
    parsedBody: body,
    authInfo: carryingFacts(facts(requestId)),
  });
  const answer = (await response.json()) as { result?: { content: Array<{ text: string }> } };
  return answer.result?.content[0]?.text ?? JSON.stringify(answer);
}

describe('the request side channel', () => {
  test('a context without the facts has none', () => {
    assert.equal(factsOf(undefined), undefined);
    assert.equal(factsOf({}), undefined);
    assert.equal(factsOf({ http: { authInfo: { token: 't', clientId: 'c', scopes: [] } } }), undefined);
    const carried = facts('a');
    assert.equal(factsOf({ http: { authInfo: carryingFacts(carried) } }), carried);
  });

  for (const era of ['legacy', 'modern'] as const) {
    test(`${era}: each call's handler reads its own facts, with calls interleaved`, async () => {
      const endpoint = createMcpEndpoint({
        version: 'test',
        reads: callerEchoingReads(),
        completions: NO_COMPLETIONS,
        observe: () => {},
        maxRequestBodySize: 65536,
      });
      try {
        const texts = await Promise.all([
          callAs(endpoint, era, 'first', 3),
          callAs(endpoint, era, 'second', 1),
          callAs(endpoint, era, 'third', 2),
        ]);
        for (const [index, name] of ['first', 'second', 'third'].entries()) {
          assert.match(texts[index]!, new RegExp(`caller api_key:${name}\\b`));
        }
      } finally {
        await endpoint.close();
      }
    });
  }

  test('no module outside tracing uses async_hooks (its first use would slow every later promise on Node 20)', () => {
    const users = readdirSync('src', { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.startsWith('trace'))
      .filter((file) => readFileSync(join('src', file), 'utf8').includes('async_hooks'));
    assert.deepEqual(users, []);
  });
});
