import type { CallSignal } from '../core/deadline.ts';
import {
  type Detection,
  type Dialect,
  detectDialect,
  explicitBaseMismatch,
  fitsDialect,
  generationOf,
  type HealthAnswer,
  versionIn,
} from './detect.ts';
import { DaguError } from './errors.ts';
import type { DaguProbeResult } from './types.ts';

/**
 * Which REST dialect the client speaks, and the readiness probe that checks it.
 *
 * - `DAGU_API_BASE=auto` (the default): found from Dagu's health routes on first use, and found again
 *   after Dagu was unreachable (it may come back as another version) or when its health route stops
 *   fitting the dialect in use.
 * - An explicit base is used as given; the probe reports when it does not fit the Dagu found.
 */
export interface DialectFinder {
  /** The dialect to use now: found first when not known yet (or no longer trusted). */
  resolve(signal?: CallSignal): Promise<Dialect>;
  /** The dialect known now, if any (explicit, or found). */
  readonly known: Dialect | undefined;
  /** The dialect `resolve` would give without asking Dagu: known and still trusted. */
  readonly inUse: Dialect | undefined;
  /** Dagu did not answer a request: with auto, find the dialect again on the next use. */
  distrust(): void;
  /** The readiness probe: reachability, the version, the dialect in use, and whether it fits. */
  probe(signal: AbortSignal): Promise<DaguProbeResult>;
}

/** Asks the health route under one REST base; throws a DaguError when Dagu does not answer. */
export type AskHealth = (apiBase: string, signal?: CallSignal) => Promise<HealthAnswer>;

/** The reason a health answer is not "ready", if any. */
function healthProblem(answer: HealthAnswer): string | undefined {
  if (answer.status !== 200) return `Dagu answered its health route with HTTP ${answer.status}`;
  if (answer.json?.status === 'unhealthy') return 'Dagu reports itself unhealthy';
  return undefined;
}

/** The errno-style code of a transport failure (`ECONNREFUSED`, …), when the cause chain has one. */
function causeCode(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== '') return code;
    cause = cause.cause;
  }
  return undefined;
}

function unreachable(error: unknown): DaguProbeResult {
  const message = error instanceof Error ? error.message : String(error);
  const code = causeCode(error instanceof Error ? error.cause : undefined);
  return { reachable: false, detail: code === undefined ? message : `${message} (${code})` };
}

/** What a probe reports: reachable when healthy, the version, the dialect in use, and any problem. */
function probeResult(answer: HealthAnswer, dialect: Dialect, problem?: string): DaguProbeResult {
  const version = versionIn(answer);
  const unhealthy = healthProblem(answer);
  return {
    reachable: unhealthy === undefined,
    ...(unhealthy === undefined ? {} : { detail: unhealthy }),
    ...(version === undefined ? {} : { version }),
    apiBase: dialect.apiBase,
    generation: dialect.generation,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** A probe of a configured (not detected) base. */
async function probeExplicit(
  ask: AskHealth,
  signal: AbortSignal,
  dialect: Dialect,
): Promise<DaguProbeResult> {
  const answer = await ask(dialect.apiBase, signal);
  // Only when the base does not answer JSON is a detection needed, to say which base would fit.
  const detected =
    answer.json === undefined
      ? await detectDialect((base) => ask(base, signal)).catch(() => undefined)
      : undefined;
  return probeResult(answer, dialect, explicitBaseMismatch(dialect.apiBase, answer, detected));
}

export function createDialectFinder(configuredBase: string, ask: AskHealth): DialectFinder {
  const auto = configuredBase === 'auto';
  let known: Dialect | undefined = auto
    ? undefined
    : { apiBase: configuredBase, generation: generationOf(configuredBase) };
  let trusted = !auto;
  /** The dialect to use without asking Dagu: known and still trusted. */
  const inUse = (): Dialect | undefined => (trusted ? known : undefined);
  let finding: Promise<Detection> | undefined;

  /** One detection at a time; its result replaces the dialect in use when one is found. */
  const find = (signal?: CallSignal): Promise<Detection> => {
    finding ??= detectDialect((apiBase) => ask(apiBase, signal))
      .then((detection) => {
        if (detection.found) {
          known = detection.dialect;
          trusted = true;
        }
        return detection;
      })
      .finally(() => {
        finding = undefined;
      });
    return finding;
  };

  async function resolve(signal?: CallSignal): Promise<Dialect> {
    const dialect = inUse();
    if (dialect !== undefined) return dialect;
    const detection = await find(signal);
    if (!detection.found)
      throw new DaguError('unreachable', `Dagu's REST API was not found: ${detection.reason}`);
    return detection.dialect;
  }

  async function probeAuto(signal: AbortSignal): Promise<DaguProbeResult> {
    const current = inUse();
    if (current !== undefined) {
      const answer = await ask(current.apiBase, signal);
      // Still the same kind of Dagu: report it. Otherwise (another generation, or no JSON there) find again.
      if (fitsDialect(answer, current)) return probeResult(answer, current);
    }
    const detection = await find(signal);
    if (!detection.found) return { reachable: true, problem: detection.reason };
    // The detection has usually just read the health route under the dialect's base: no second request.
    return probeResult(detection.answer ?? (await ask(detection.dialect.apiBase, signal)), detection.dialect);
  }

  const distrust = () => {
    if (auto) trusted = false;
  };

  return {
    resolve,
    get known() {
      return known;
    },
    get inUse() {
      return inUse();
    },
    distrust,
    async probe(signal) {
      try {
        const probed =
          auto || known === undefined ? await probeAuto(signal) : await probeExplicit(ask, signal, known);
        if (!probed.reachable) distrust();
        return probed;
      } catch (error) {
        distrust();
        return unreachable(error);
      }
    },
  };
}
