import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Log } from './core/log.ts';

/**
 * A full garbage collection once the gateway falls quiet after a burst, so that resident memory
 * comes back near its start. A flood of requests held for their time bounds (HTTP/2 streams that
 * never send their body: 8,000 at once) leaves tens of MiB of garbage in the old generation, and an
 * idle process allocates nothing that would start a collection: V8's memory reducer took about 40 s
 * to act, or never did. Measured (`npm run bench:h2-flood`, Node 20): RSS 110 MiB before such a
 * flood and 205 MiB 30 s after it without this; with it 105–109 before and 122–129 after, the heap
 * back under its start and the rest native memory of the closed connections.
 */
export interface MemorySettleOptions {
  /** How often the heap and the event loop are looked at. */
  checkMs: number;
  /** Heap growth since the last collection that counts as a burst. */
  growthBytes: number;
  /** Share of the last check's time the event loop was busy, under which the gateway is quiet. */
  quietUtilization: number;
}

export const MEMORY_SETTLE_DEFAULTS: MemorySettleOptions = {
  checkMs: 5000,
  growthBytes: 16 * 2 ** 20,
  quietUtilization: 0.05,
};

/** What the settle reads and does; the process's own by default (tests pass their own). */
export interface MemoryProbe {
  usedHeapBytes(): number;
  /** The event loop's busy share since the previous call (0–1). */
  utilization(): number;
  collect(): void;
}

/**
 * The process's heap, event loop and collector. `gc` is exposed for this one function (as Jest's
 * leak detector does) rather than by a `--expose-gc` flag every way of starting the gateway would
 * need; it is no other code's.
 */
export function processMemoryProbe(): MemoryProbe {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let last = performance.eventLoopUtilization();
  return {
    usedHeapBytes: () => getHeapStatistics().used_heap_size,
    utilization: () => {
      const now = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return share;
    },
    collect: gc,
  };
}

/**
 * Collections after a burst, one per quiet check: V8 gives the pages of a grown heap back to the
 * system over its next collections, not at the first (as its own memory reducer does, three times).
 */
export const COLLECTIONS_PER_BURST = 3;

/** One check: collects when the heap grew by a burst's worth (or a burst is settling) and the loop was quiet. */
export function memorySettler(
  probe: MemoryProbe,
  options: MemorySettleOptions,
  log?: Log,
): { check(): boolean } {
  let baseline = probe.usedHeapBytes();
  let settling = 0;
  return {
    check() {
      const used = probe.usedHeapBytes();
      const quiet = probe.utilization() < options.quietUtilization;
      baseline = Math.min(baseline, used);
      if (used - baseline >= options.growthBytes) settling = COLLECTIONS_PER_BURST;
      if (!quiet || settling === 0) return false;
      settling--;
      probe.collect();
      baseline = probe.usedHeapBytes();
      log?.debug(
        { beforeMiB: Math.round(used / 2 ** 20), afterMiB: Math.round(baseline / 2 ** 20) },
        'memory settled after a burst',
      );
      return true;
    },
  };
}

/** Checks every `checkMs`, for the life of the process (the timer never keeps it alive). */
export function settleMemoryAfterBursts(
  log: Log,
  options: MemorySettleOptions = MEMORY_SETTLE_DEFAULTS,
  probe: MemoryProbe = processMemoryProbe(),
): void {
  const settler = memorySettler(probe, options, log);
  setInterval(() => settler.check(), options.checkMs).unref();
}
