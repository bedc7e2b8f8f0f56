import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchLeanCall } from '../../../src/mcp/lean.ts';

// The lean path's answers are held to the SDK's by test/integration/mcp/lean.differential.test.ts;
// here, which modern envelopes it takes without the SDK, as a client sends them call after call.
const HEADERS = {
  'content-type': 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'dagu_read',
};
const PROTOCOL = 'io.modelcontextprotocol/protocolVersion';
const INFO = 'io.modelcontextprotocol/clientInfo';
const CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

const call = (meta: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'dagu_read', arguments: { target: 'dags' }, _meta: meta },
});

describe('matchLeanCall on the modern leg', () => {
  it('takes the same envelope call after call, and the same in another key order', () => {
    const meta = {
      [PROTOCOL]: '2026-07-28',
      [INFO]: { name: 'unit', version: '1.0.0' },
      [CAPABILITIES]: { roots: {} },
    };
    for (let i = 0; i < 3; i += 1) {
      assert.deepEqual(matchLeanCall(call(structuredClone(meta)), HEADERS), {
        method: 'tools/call',
        era: 'modern',
        id: 7,
        rawArguments: { target: 'dags' },
      });
    }
    const reordered = { [CAPABILITIES]: { roots: {} }, [INFO]: { version: '1.0.0', name: 'unit' } };
    assert.equal(matchLeanCall(call({ [PROTOCOL]: '2026-07-28', ...reordered }), HEADERS)?.era, 'modern');
  });

  it('still asks the classifier about an envelope that differs from the one accepted before', () => {
    const accepted = {
      [PROTOCOL]: '2026-07-28',
      [INFO]: { name: 'unit', version: '1.0.0' },
      [CAPABILITIES]: {},
    };
    assert.equal(matchLeanCall(call(accepted), HEADERS)?.era, 'modern');
    for (const refused of [
      { ...accepted, [INFO]: { name: 5, version: '1.0.0' } },
      { ...accepted, [INFO]: 'unit' },
      { ...accepted, [INFO]: [{ name: 'unit', version: '1.0.0' }] },
      { ...accepted, [CAPABILITIES]: [] },
      { [PROTOCOL]: '2026-07-28', [INFO]: { name: 'unit', version: '1.0.0' } },
    ]) {
      assert.equal(matchLeanCall(call(refused), HEADERS), undefined, JSON.stringify(refused));
    }
    assert.equal(matchLeanCall(call(accepted), HEADERS)?.era, 'modern');
  });
});
