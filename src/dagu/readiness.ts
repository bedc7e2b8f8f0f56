import { displayUrl } from '../core/display-url.ts';
import type { Log } from '../core/log.ts';
import type { DaguProbeResult } from './types.ts';

export type { DaguProbeResult };

export type DaguProbe = (signal: AbortSignal) => Promise<DaguProbeResult>;

/** The last probe result, as `/readyz` reports it. */
export interface DaguReadinessSnapshot extends DaguProbeResult {
  /** Dagu's base URL without credentials. */
  url: string;
  /** When the probe behind this snapshot finished (ISO 8601); absent before the first one. */
  checkedAt?: string;
}

export interface DaguReadiness {
  /** The cached snapshot; before the first probe ends, waits for it at most `firstResultWaitMs`. */
  current(): Promise<DaguReadinessSnapshot>;
  /**
   * Told after each real upstream call whether Dagu answered. An outcome that disagrees with the cached
   * state probes again at once, so the gateway notices Dagu leaving or coming back between two timer ticks.
   */
  observe(answered: boolean): void;
  /** Probes now, unless a probe is already running (then that one's result). */
  refresh(): Promise<DaguReadinessSnapshot>;
  close(): void;
}

export interface DaguReadinessOptions {
  probe: DaguProbe;
  /** Dagu's base URL; credentials in it are never reported. */
  url: string;
  log: Pick<Log, 'info' | 'warn'>;
  /** Per-probe timeout, independent of the timeout of reads. */
  timeoutMs: number;
  /** Background probe period; 0 disables the timer (probes then run on demand and on observed outcomes). */
  intervalMs: number;
  /** Called with every probe's result (metrics). */
  onProbe?(snapshot: DaguReadinessSnapshot): void;
  /** How long `/readyz` waits for the very first probe before answering "not checked yet". */
  firstResultWaitMs?: number;
  now?: () => Date;
}

type ReadinessState = 'ready' | 'unreachable' | 'unusable';

const stateOf = (probe: DaguProbeResult): ReadinessState =>
  !probe.reachable ? 'unreachable' : probe.problem === undefined ? 'ready' : 'unusable';

/** A probe never runs more often than this in response to observed outcomes. */
const MIN_OBSERVED_GAP_MS = 250;

/** Logs a change of state once (Dagu found, gone, back, unusable) and a new REST dialect. */
function reportChange(
  log: DaguReadinessOptions['log'],
  url: string,
  previous: DaguReadinessSnapshot | undefined,
  next: DaguReadinessSnapshot,
): void {
  const was = previous === undefined ? undefined : stateOf(previous);
  const now = stateOf(next);
  const facts = { dagu: url, version: next.version, apiBase: next.apiBase };
  if (now === was) {
    if (now === 'ready' && previous?.apiBase !== next.apiBase) log.info(facts, 'Dagu REST dialect changed');
    return;
  }
  if (now === 'ready') {
    log.info(facts, was === undefined ? 'Dagu found' : 'Dagu is reachable again');
  } else if (now === 'unreachable') {
    log.warn({ dagu: url, reason: next.detail }, 'Dagu is unreachable; /readyz answers 503 until it is back');
  } else {
    log.warn({ ...facts, reason: next.problem }, 'Dagu answers but cannot be used; /readyz answers 503');
  }
}

/** One probe with its own timeout; a throw or a timeout is an unreachable Dagu, with the reason. */
async function probeWithin(
  probe: DaguReadinessOptions['probe'],
  timeoutMs: number,
): Promise<DaguProbeResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  let result: DaguProbeResult;
  try {
    result = await probe(signal);
  } catch (error) {
    result = { reachable: false, detail: error instanceof Error ? error.message : String(error) };
  }
  if (!result.reachable && signal.aborted) {
    result = { ...result, detail: `Dagu did not answer its health route within ${timeoutMs} ms` };
  }
  return result;
}

/**
 * Readiness of the upstream Dagu, kept off the request path: a background probe with its own short
 * timeout refreshes a cached result, `/readyz` answers from that cache, and a change of state is logged
 * exactly once (Dagu gone, Dagu back).
 */
export function createDaguReadiness(options: DaguReadinessOptions): DaguReadiness {
  const url = displayUrl(options.url);
  const now = options.now ?? (() => new Date());
  const firstResultWaitMs = options.firstResultWaitMs ?? 500;
  let snapshot: DaguReadinessSnapshot | undefined;
  let running: Promise<DaguReadinessSnapshot> | undefined;
  let lastObservedProbe = 0;
  let closed = false;

  const probeOnce = async (): Promise<DaguReadinessSnapshot> => {
    const result = await probeWithin(options.probe, options.timeoutMs);
    const next: DaguReadinessSnapshot = { ...result, url, checkedAt: now().toISOString() };
    if (!closed) reportChange(options.log, url, snapshot, next);
    snapshot = next;
    options.onProbe?.(next);
    return next;
  };

  const refresh = () => {
    running ??= probeOnce().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer =
    options.intervalMs > 0
      ? setInterval(() => {
          void refresh();
        }, options.intervalMs)
      : undefined;
  timer?.unref();
  void refresh();

  return {
    async current() {
      if (snapshot !== undefined) return snapshot;
      let timeout: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        refresh(),
        new Promise<undefined>((resolve) => {
          timeout = setTimeout(() => resolve(undefined), firstResultWaitMs);
        }),
      ]);
      clearTimeout(timeout);
      return (
        waited ?? {
          url,
          reachable: false,
          detail: 'Dagu has not been checked yet (first probe still running)',
        }
      );
    },
    observe(answered) {
      if (snapshot === undefined || snapshot.reachable === answered) return;
      const at = Date.now();
      if (at - lastObservedProbe < MIN_OBSERVED_GAP_MS) return;
      lastObservedProbe = at;
      void refresh();
    },
    refresh,
    close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
    },
  };
}
