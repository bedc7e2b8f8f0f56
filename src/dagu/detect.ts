/**
 * Finding the REST dialect of the Dagu at DAGU_URL from its health route (`DAGU_API_BASE=auto`).
 *
 * Dagu 2.x serves its REST API under `/api/v1`; Dagu 1.30 under `/api/v2`, and also still answers
 * `/api/v1/health` (its legacy API). Dagu 2.x answers `/api/v2/health` with its web UI's HTML page
 * (200, not JSON). So the base that answers is not enough: the version each health route reports
 * decides (`v2.15.1` → `/api/v1`, `1.30.3` → `/api/v2`); for a version that is not a release number
 * (a development build), a JSON answer on `/api/v2/health` means 1.x.
 */

export type Generation = 1 | 2;

export const API_BASES: Readonly<Record<Generation, string>> = { 1: '/api/v2', 2: '/api/v1' };

export interface Dialect {
  apiBase: string;
  generation: Generation;
}

/** What one health route answered: a JSON body, or something else (HTML, plain text, empty). */
export type HealthAnswer =
  | { status: number; json: Record<string, unknown> }
  | { status: number; json?: undefined };

/** Dagu 1.x serves its current REST API under `/api/v2`; Dagu 2.x under `/api/v1`. */
export function generationOf(apiBase: string): Generation {
  return /\/api\/v2\/?$/.test(apiBase) ? 1 : 2;
}

/** The generation a release version belongs to (`v2.15.1`, `2.15.1` → 2; `1.30.3` → 1); else undefined. */
export function generationOfVersion(version: string | undefined): Generation | undefined {
  const major = /^v?(\d+)\.\d+/.exec(version ?? '')?.[1];
  if (major === undefined) return undefined;
  return Number(major) >= 2 ? 2 : Number(major) === 1 ? 1 : undefined;
}

/** The version a health answer reports, if any. */
export const versionIn = (answer: HealthAnswer | undefined): string | undefined =>
  typeof answer?.json?.version === 'string' ? answer.json.version : undefined;

const healthy = (
  answer: HealthAnswer | undefined,
): answer is { status: number; json: Record<string, unknown> } =>
  answer !== undefined && answer.status === 200 && answer.json !== undefined;

/** True when a health answer still fits the dialect in use: JSON, from a Dagu of the same generation (or of an unknown version). */
export function fitsDialect(answer: HealthAnswer, dialect: Dialect): boolean {
  if (answer.json === undefined) return false;
  const generation = generationOfVersion(versionIn(answer));
  return generation === undefined || generation === dialect.generation;
}

export type Detection =
  | {
      found: true;
      dialect: Dialect;
      version: string | undefined;
      /** The health answer under the dialect's own base, when detection read it (a probe need not ask again). */
      answer: HealthAnswer | undefined;
    }
  | { found: false; reason: string };

/**
 * Asks the health routes (`ask(apiBase)`, which throws when Dagu cannot be reached) and decides the
 * dialect. A Dagu that answers neither route with JSON is not found, with the reason.
 */
export async function detectDialect(ask: (apiBase: string) => Promise<HealthAnswer>): Promise<Detection> {
  const v1 = await ask(API_BASES[2]);
  const fromV1 = healthy(v1) ? generationOfVersion(versionIn(v1)) : undefined;
  if (fromV1 !== undefined) {
    return {
      found: true,
      dialect: { apiBase: API_BASES[fromV1], generation: fromV1 },
      version: versionIn(v1),
      answer: fromV1 === 2 ? v1 : undefined,
    };
  }
  const v2 = await ask(API_BASES[1]);
  if (healthy(v2)) {
    return {
      found: true,
      dialect: { apiBase: API_BASES[1], generation: 1 },
      version: versionIn(v2) ?? versionIn(v1),
      answer: v2,
    };
  }
  if (healthy(v1))
    return {
      found: true,
      dialect: { apiBase: API_BASES[2], generation: 2 },
      version: versionIn(v1),
      answer: v1,
    };
  return {
    found: false,
    reason: `Dagu's health route answers with no JSON under /api/v1 (HTTP ${v1.status}) or /api/v2 (HTTP ${v2.status}): is DAGU_URL the base URL of a Dagu server?`,
  };
}

/**
 * Why an explicit DAGU_API_BASE does not fit the Dagu at DAGU_URL (undefined when it fits): the health
 * route under it answers no JSON, or reports a version of the other generation. `detected` (what
 * auto-detection finds there) only makes the reason say which base would fit.
 */
export function explicitBaseMismatch(
  apiBase: string,
  answer: HealthAnswer,
  detected?: Detection,
): string | undefined {
  const expected = generationOf(apiBase);
  const hint = detected?.found
    ? ` This Dagu (${detected.version ?? `${detected.dialect.generation}.x`}) serves ${detected.dialect.apiBase}.`
    : '';
  const advice = ' Unset DAGU_API_BASE (auto) or set the base this Dagu serves.';
  if (!healthy(answer)) {
    return `DAGU_API_BASE=${apiBase} does not fit: Dagu's health route there answers HTTP ${answer.status} without JSON.${hint}${advice}`;
  }
  const version = versionIn(answer);
  const actual = generationOfVersion(version);
  if (actual === undefined || actual === expected) return undefined;
  return `DAGU_API_BASE=${apiBase} is the REST base of Dagu ${expected}.x, but this Dagu reports ${version}, which serves ${API_BASES[actual]}.${advice}`;
}
