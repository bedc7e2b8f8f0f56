/**
 * Sums a V8 `.cpuprofile` (as `node --cpu-prof` writes it) by area and by function, for bench:profile.
 * An area is a package (`node_modules/<name>`), a file of the gateway's `src/`, Node's own internals, or
 * one of V8's pseudo-nodes (garbage collector, program); `(idle)` is left out, since it is no CPU.
 * Self time counts a sample once, for the frame it was taken in; inclusive time counts it once for each
 * distinct area (or function) on its stack, so recursion does not count twice.
 */

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  /** Microseconds, on the clock of `process.hrtime` (CLOCK_MONOTONIC). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The area of a frame's script URL. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + '/node_modules/'.length).split('/');
    return scope?.startsWith('@') ? `${scope}/${name}` : (scope ?? url);
  }
  const source = /\/(?:src|dist)\/(.+?)\.(?:ts|js)$/.exec(url);
  return source ? `src/${source[1]}` : url.replace(/^file:\/\//, '');
}

const functionKey = (node: Pick<CpuProfileNode, 'callFrame'>) =>
  `${node.callFrame.functionName || '(anonymous)'} ${areaOf(node.callFrame.url, node.callFrame.functionName)}:${node.callFrame.lineNumber + 1}`;

export interface ProfileTotals {
  /** Microseconds of CPU (idle left out) in the window. */
  totalMicros: number;
  selfByArea: Map<string, number>;
  inclusiveByArea: Map<string, number>;
  selfByFunction: Map<string, number>;
  inclusiveByFunction: Map<string, number>;
}

/** A span of the profile's clock, from its first microsecond until before its second. */
export type Window = readonly [fromMicros: number, toMicros: number];

/** Totals of the samples taken inside any of `windows` (the profile's clock); all samples by default. */
export function profileTotals(
  profile: CpuProfile,
  windows: readonly Window[] = [[0, Infinity]],
): ProfileTotals {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const totals: ProfileTotals = {
    totalMicros: 0,
    selfByArea: new Map(),
    inclusiveByArea: new Map(),
    selfByFunction: new Map(),
    inclusiveByFunction: new Map(),
  };
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros);
  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0;
    // A sample's time is the span until the next one.
    const micros = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]!);
    if (node === undefined || !windows.some(([from, to]) => time >= from && time < to)) continue;
    if (node.callFrame.functionName === '(idle)') continue;
    totals.totalMicros += micros;
    add(totals.selfByArea, areaOf(node.callFrame.url, node.callFrame.functionName), micros);
    add(totals.selfByFunction, functionKey(node), micros);
    const areas = new Set<string>();
    const functions = new Set<string>();
    for (let at: number | undefined = node.id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!;
      if (frame.callFrame.functionName === '(root)') break;
      areas.add(areaOf(frame.callFrame.url, frame.callFrame.functionName));
      functions.add(functionKey(frame));
    }
    for (const area of areas) add(totals.inclusiveByArea, area, micros);
    for (const key of functions) add(totals.inclusiveByFunction, key, micros);
  }
  return totals;
}

function table(title: string, map: Map<string, number>, total: number, calls: number, rows: number) {
  const lines = [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(
      ([key, micros]) =>
        `  ${(micros / calls).toFixed(1).padStart(8)} µs/call ${((100 * micros) / total).toFixed(1).padStart(5)} %  ${key}`,
    );
  return [`${title}:`, ...lines].join('\n');
}

/** A printable summary of a process's totals: CPU per call, then the top areas and functions. */
export function summarizeTotals(totals: ProfileTotals, calls: number, rows = 25): string {
  return [
    `profiled CPU (main thread, idle left out): ${(totals.totalMicros / calls).toFixed(1)} µs/call`,
    table('self time by area', totals.selfByArea, totals.totalMicros, calls, rows),
    table('inclusive time by area', totals.inclusiveByArea, totals.totalMicros, calls, rows),
    table('self time by function', totals.selfByFunction, totals.totalMicros, calls, rows),
    table('inclusive time by function', totals.inclusiveByFunction, totals.totalMicros, calls, rows * 2),
  ].join('\n\n');
}

/**
 * Self time per call by area, the processes side by side (the first decides the order): Node's
 * internals, V8 and the shared packages (undici) are in all; what only the gateway runs is the difference.
 */
export function compareAreas(processes: ReadonlyMap<string, ProfileTotals>, calls: number): string {
  const all = [...processes.values()];
  const first = all[0]?.selfByArea ?? new Map<string, number>();
  const areas = [...new Set(all.flatMap((totals) => [...totals.selfByArea.keys()]))].sort(
    (a, b) => (first.get(b) ?? 0) - (first.get(a) ?? 0),
  );
  const cell = (micros: number | undefined) => ((micros ?? 0) / calls).toFixed(1).padStart(14);
  const shown = (area: string) => all.some((totals) => (totals.selfByArea.get(area) ?? 0) / calls >= 0.5);
  const row = (label: string, cells: string[]) => `  ${label.slice(0, 32).padEnd(32)}${cells.join('')}`;
  return [
    row(
      'self time, µs per call',
      [...processes.keys()].map((name) => name.padStart(14)),
    ),
    row(
      'all (main thread)',
      all.map((totals) => cell(totals.totalMicros)),
    ),
    ...areas.filter(shown).map((area) =>
      row(
        area,
        all.map((totals) => cell(totals.selfByArea.get(area))),
      ),
    ),
  ].join('\n');
}

/** One node of V8's sampling heap profile (`HeapProfiler.stopSampling`): its frame and the bytes sampled there. */
export interface HeapProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  /** Bytes allocated in this frame itself (V8's estimate, scaled up from the samples). */
  selfSize: number;
  children: HeapProfileNode[];
}

export interface HeapProfile {
  head: HeapProfileNode;
  /** One entry per sampled allocation, in the frame `nodeId`; `size` is scaled up like selfSize. */
  samples: Array<{ size: number; nodeId: number }>;
  /** Bytes between samples, as bench/heap-sampler.mjs started it; 1: every allocation is a sample. */
  samplingInterval: number;
}

export interface AllocationTotals {
  bytes: number;
  /** Allocations (heap objects); exact when every allocation was sampled (interval 1), else unknown. */
  objects: number | undefined;
  selfBytesByArea: Map<string, number>;
  selfObjectsByArea: Map<string, number>;
  inclusiveBytesByArea: Map<string, number>;
  selfBytesByFunction: Map<string, number>;
  selfObjectsByFunction: Map<string, number>;
}

/**
 * Bytes and objects allocated by area and by function (self, and inclusive by area, an area counted once
 * per stack), from a sampling heap profile. Objects are counted from the samples, one each, only when the
 * interval was 1 byte (each allocation sampled); at a larger interval a sample stands for a guessed share.
 */
export function allocationTotals(profile: HeapProfile): AllocationTotals {
  const exact = profile.samplingInterval === 1;
  const samplesByNode = new Map<number, number>();
  for (const sample of profile.samples)
    samplesByNode.set(sample.nodeId, (samplesByNode.get(sample.nodeId) ?? 0) + 1);
  const totals: AllocationTotals = {
    bytes: 0,
    objects: exact ? 0 : undefined,
    selfBytesByArea: new Map(),
    selfObjectsByArea: new Map(),
    inclusiveBytesByArea: new Map(),
    selfBytesByFunction: new Map(),
    selfObjectsByFunction: new Map(),
  };
  const add = (map: Map<string, number>, key: string, amount: number) => {
    if (amount > 0) map.set(key, (map.get(key) ?? 0) + amount);
  };
  const visit = (node: HeapProfileNode, stackAreas: ReadonlySet<string>) => {
    const { functionName, url } = node.callFrame;
    const area = areaOf(url, functionName);
    const areas = functionName === '(root)' ? stackAreas : new Set([...stackAreas, area]);
    const objects = samplesByNode.get(node.id) ?? 0;
    totals.bytes += node.selfSize;
    if (totals.objects !== undefined) totals.objects += objects;
    if (functionName !== '(root)') {
      add(totals.selfBytesByArea, area, node.selfSize);
      add(totals.selfBytesByFunction, functionKey(node), node.selfSize);
      if (exact) {
        add(totals.selfObjectsByArea, area, objects);
        add(totals.selfObjectsByFunction, functionKey(node), objects);
      }
    }
    for (const each of areas) add(totals.inclusiveBytesByArea, each, node.selfSize);
    for (const child of node.children) visit(child, areas);
  };
  visit(profile.head, new Set());
  return totals;
}

/**
 * Allocation per call by area, the processes side by side (bytes, and objects where counted), ordered
 * by the first process's bytes; then the first process's top functions by bytes.
 */
export function compareAllocations(
  processes: ReadonlyMap<string, AllocationTotals>,
  calls: number,
  rows = 25,
): string {
  const all = [...processes.values()];
  const first = all[0]?.selfBytesByArea ?? new Map<string, number>();
  const areas = [...new Set(all.flatMap((totals) => [...totals.selfBytesByArea.keys()]))]
    .filter((area) => all.some((totals) => (totals.selfBytesByArea.get(area) ?? 0) / calls >= 16))
    .sort((a, b) => (first.get(b) ?? 0) - (first.get(a) ?? 0));
  const cell = (bytes: number | undefined, objects: number | undefined) =>
    `${((bytes ?? 0) / calls).toFixed(0)} B${objects === undefined ? '' : ` ${(objects / calls).toFixed(1)}`}`.padStart(
      20,
    );
  const row = (label: string, cells: string[]) => `  ${label.slice(0, 32).padEnd(32)}${cells.join('')}`;
  const objectsOf = (totals: AllocationTotals, area: string) =>
    totals.objects === undefined ? undefined : (totals.selfObjectsByArea.get(area) ?? 0);
  const functions = [...(all[0]?.selfBytesByFunction ?? new Map<string, number>()).entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(([key, bytes]) => {
      const objects =
        all[0]?.objects === undefined
          ? ''
          : ` ${((all[0].selfObjectsByFunction.get(key) ?? 0) / calls).toFixed(1).padStart(6)} objects`;
      return `  ${(bytes / calls).toFixed(0).padStart(8)} B${objects}  ${key}`;
    });
  return [
    row(
      'allocated per call (B, objects)',
      [...processes.keys()].map((name) => name.padStart(20)),
    ),
    row(
      'all',
      all.map((totals) => cell(totals.bytes, totals.objects)),
    ),
    ...areas.map((area) =>
      row(
        area,
        all.map((totals) => cell(totals.selfBytesByArea.get(area), objectsOf(totals, area))),
      ),
    ),
    '',
    `${[...processes.keys()][0]}: self allocation by function, per call:`,
    ...functions,
  ].join('\n');
}

/** System calls per call over a cell, from the table `strace -c` writes (its `calls` column). */
export function syscallsPerCall(table: string, calls: number): string {
  const rows = table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((cells) => cells.length >= 5 && /^\d+$/.test(cells[3] ?? '') && cells.at(-1) !== 'total')
    .map((cells) => [cells.at(-1)!, Number(cells[3]) / calls] as const)
    .filter(([, perCall]) => perCall >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  return rows.map(([call, perCall]) => `${call} ${perCall.toFixed(2)}`).join(', ');
}
