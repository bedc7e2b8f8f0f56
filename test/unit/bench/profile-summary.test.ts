import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allocationTotals,
  areaOf,
  type CpuProfile,
  compareAllocations,
  compareAreas,
  type HeapProfile,
  type HeapProfileNode,
  profileTotals,
  syscallsPerCall,
} from '../../../bench/profile-summary.ts';

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url, lineNumber: 9 },
  children,
});

// (root) → handler (src/http/mcp-route) → parse (fastify) → handler again (recursion) ; (idle) ; (garbage collector)
const PROFILE: CpuProfile = {
  nodes: [
    frame(1, '(root)', '', [2, 5, 6]),
    frame(2, 'handler', 'file:///app/dist/http/mcp-route.js', [3]),
    frame(3, 'parse', 'file:///app/node_modules/fastify/lib/route.js', [4]),
    frame(4, 'handler', 'file:///app/dist/http/mcp-route.js'),
    frame(5, '(idle)', ''),
    frame(6, '(garbage collector)', ''),
  ],
  startTime: 1000,
  // Sample i lasts until sample i + 1: 10, 20, 30, 40 and 50 µs; the last one has no length.
  samples: [2, 3, 4, 5, 6, 2],
  timeDeltas: [0, 10, 20, 30, 40, 50],
};

const heapNode = (
  id: number,
  functionName: string,
  url: string,
  selfSize: number,
  children: HeapProfileNode[] = [],
): HeapProfileNode => ({ id, callFrame: { functionName, url, lineNumber: 9 }, selfSize, children });

// (root) → handler (src/http/mcp-route, 100 B in 2 objects) → parse (fastify, 40 B in 1)
//        → handler again (recursion, 24 B in 1); (root) → (V8 API) (8 B in 1)
const HEAP: HeapProfile = {
  head: heapNode(1, '(root)', '', 0, [
    heapNode(2, 'handler', 'file:///app/dist/http/mcp-route.js', 100, [
      heapNode(3, 'parse', 'file:///app/node_modules/fastify/lib/route.js', 40, [
        heapNode(4, 'handler', 'file:///app/dist/http/mcp-route.js', 24),
      ]),
    ]),
    heapNode(5, '(V8 API)', '', 8),
  ]),
  samples: [
    { nodeId: 2, size: 60 },
    { nodeId: 2, size: 40 },
    { nodeId: 3, size: 40 },
    { nodeId: 4, size: 24 },
    { nodeId: 5, size: 8 },
  ],
  samplingInterval: 1,
};

describe('bench profile summary', () => {
  it('names the area of a frame: package, scoped package, src file, Node, V8 pseudo-frames', () => {
    assert.equal(areaOf('file:///x/node_modules/fastify/lib/route.js', 'f'), 'fastify');
    assert.equal(
      areaOf('file:///x/node_modules/a/node_modules/@fastify/cors/index.js', 'f'),
      '@fastify/cors',
    );
    assert.equal(areaOf('file:///x/dist/read/targets/runs.js', 'f'), 'src/read/targets/runs');
    assert.equal(areaOf('file:///x/src/audit/audit-log.ts', 'f'), 'src/audit/audit-log');
    assert.equal(areaOf('node:internal/streams/writable', 'f'), 'node:internal');
    assert.equal(areaOf('', '(garbage collector)'), '(garbage collector)');
    assert.equal(areaOf('', 'writev'), '(native)');
  });

  it('sums self and inclusive time, leaves idle out and counts a recursive frame once per sample', () => {
    const totals = profileTotals(PROFILE);
    // handler 10, parse 20, handler-in-parse 30, idle 40 (left out), GC 50, the last sample 0.
    assert.equal(totals.totalMicros, 110);
    assert.equal(totals.selfByArea.get('src/http/mcp-route'), 40);
    assert.equal(totals.selfByArea.get('fastify'), 20);
    assert.equal(totals.selfByArea.get('(garbage collector)'), 50);
    assert.equal(totals.selfByArea.has('(idle)'), false);
    // handler is on the stack of samples 1, 2 and 3: 60 µs, though it appears twice in sample 3.
    assert.equal(totals.inclusiveByArea.get('src/http/mcp-route'), 60);
    assert.equal(totals.inclusiveByFunction.get('handler src/http/mcp-route:10'), 60);
    assert.equal(totals.inclusiveByArea.get('fastify'), 50);
  });

  it('counts only the samples from a point in time on', () => {
    // Samples at 1000, 1010, 1030, 1060, 1100, 1150: from 1030 on, the third (30 µs) and GC (50 µs).
    const totals = profileTotals(PROFILE, [[1030, Infinity]]);
    assert.equal(totals.totalMicros, 80);
    assert.equal(totals.selfByArea.get('fastify'), undefined);
    assert.equal(totals.selfByArea.get('src/http/mcp-route'), 30);
  });

  it('prints the areas of several processes side by side, per call', () => {
    const table = compareAreas(
      new Map([
        ['gateway', profileTotals(PROFILE)],
        ['floor', profileTotals(PROFILE, [[1030, Infinity]])],
      ]),
      10,
    );
    const lines = table.split('\n');
    assert.match(lines[0]!, /gateway\s+floor$/);
    assert.match(lines[1]!, /all \(main thread\)\s+11\.0\s+8\.0$/);
    assert.ok(lines.some((line) => /^\s+fastify\s+2\.0\s+0\.0$/.test(line)));
  });

  it('counts only the samples inside the windows given (interleaved cells)', () => {
    // [1010, 1060): parse (20 µs), handler-in-parse (30 µs); [1100, 1150): GC (50 µs); idle at 1060 is out.
    const totals = profileTotals(PROFILE, [
      [1010, 1060],
      [1100, 1150],
    ]);
    assert.equal(totals.totalMicros, 100);
    assert.equal(totals.selfByArea.get('fastify'), 20);
    assert.equal(totals.selfByArea.get('(garbage collector)'), 50);
    assert.equal(totals.selfByArea.get('src/http/mcp-route'), 30);
  });

  it('sums allocated bytes and objects by area and function, an area once per stack', () => {
    const totals = allocationTotals(HEAP);
    assert.equal(totals.bytes, 172);
    assert.equal(totals.objects, 5);
    assert.equal(totals.selfBytesByArea.get('src/http/mcp-route'), 124);
    assert.equal(totals.selfObjectsByArea.get('src/http/mcp-route'), 3);
    assert.equal(totals.selfBytesByArea.get('fastify'), 40);
    assert.equal(totals.selfBytesByArea.get('(V8 API)'), 8);
    assert.equal(totals.selfBytesByFunction.get('handler src/http/mcp-route:10'), 124);
    assert.equal(totals.selfObjectsByFunction.get('parse fastify:10'), 1);
    // mcp-route is on every stack of the handler's subtree (164 B), counted once despite the recursion.
    assert.equal(totals.inclusiveBytesByArea.get('src/http/mcp-route'), 164);
    assert.equal(totals.inclusiveBytesByArea.get('fastify'), 64);
    assert.equal(totals.inclusiveBytesByArea.has('(root)'), false);
  });

  it('counts no objects when not every allocation was sampled', () => {
    const totals = allocationTotals({ ...HEAP, samplingInterval: 512 });
    assert.equal(totals.bytes, 172);
    assert.equal(totals.objects, undefined);
    assert.equal(totals.selfObjectsByArea.size, 0);
  });

  it('prints allocation per call of several processes side by side, then the functions of the first', () => {
    const lines = compareAllocations(
      new Map([
        ['gateway', allocationTotals(HEAP)],
        [
          'floor',
          allocationTotals({ ...HEAP, head: heapNode(1, '(root)', '', 0, [HEAP.head.children[1]!]) }),
        ],
      ]),
      1,
    ).split('\n');
    assert.match(lines[0]!, /gateway\s+floor$/);
    // The floor's profile keeps only the (V8 API) node: its one sample is its one object.
    assert.match(lines[1]!, /^\s+all\s+172 B 5\.0\s+8 B 1\.0$/);
    assert.ok(lines.some((line) => /^\s+src\/http\/mcp-route\s+124 B 3\.0\s+0 B 0\.0$/.test(line)));
    // Areas under 16 B per call in every process are left out.
    const areaRows = lines.slice(0, lines.indexOf(''));
    assert.ok(areaRows.some((line) => /^\s+fastify\s/.test(line)));
    assert.ok(!areaRows.some((line) => line.includes('(V8 API)')));
    assert.ok(
      lines.some((line) => /^\s+124 B\s+3\.0 objects {2}handler src\/http\/mcp-route:10$/.test(line)),
    );
  });

  it('reads system calls per call from strace -c output', () => {
    const table = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 94.68    2.246358        1757      1278       123 futex
  2.35    0.055847           7      7811           epoll_pwait
  1.42    0.033757           8      4000           write
  0.01    0.000172           8        20           munmap
------ ----------- ----------- --------- --------- ----------------
100.00    2.372652         123     13109       123 total
`;
    assert.equal(syscallsPerCall(table, 2000), 'epoll_pwait 3.91, write 2.00, futex 0.64');
  });
});
