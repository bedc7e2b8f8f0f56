/** The MCP methods the gateway serves: the route lets each through, and metrics label each by name. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MCP_METHODS } from '../../../src/core/mcp-methods.ts';
import { unservedReason } from '../../../src/http/mcp-route.ts';
import { boundedMethod, OTHER } from '../../../src/metrics/metrics.ts';

test('every listed method is served by the MCP route; another method is unknown_method', () => {
  for (const method of MCP_METHODS) {
    const params = method === 'tools/call' ? { name: 'dagu_read' } : {};
    assert.equal(unservedReason({ jsonrpc: '2.0', id: 1, method, params }), undefined, method);
  }
  assert.deepEqual(unservedReason({ jsonrpc: '2.0', id: 1, method: 'tools/delete' }), {
    reason: 'unknown_method',
    method: 'tools/delete',
  });
});

test('an unserved method or tool name is cut to 64 code points, an emoji at the cut kept whole', () => {
  const kept = `${'m'.repeat(63)}😀`;
  assert.deepEqual(unservedReason({ jsonrpc: '2.0', id: 1, method: `${kept}tail` }), {
    reason: 'unknown_method',
    method: kept,
  });
  assert.deepEqual(
    unservedReason({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: `${kept}tail` } }),
    { reason: 'unknown_tool', method: 'tools/call', tool: kept },
  );
});

test('metrics label every listed method by its name and anything else as other', () => {
  assert.equal(new Set(MCP_METHODS).size, MCP_METHODS.length);
  for (const method of MCP_METHODS) assert.equal(boundedMethod(method), method);
  assert.equal(boundedMethod('tools/delete'), OTHER);
});
