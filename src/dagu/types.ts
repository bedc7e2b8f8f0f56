import type { CallSignal } from '../core/deadline.ts';

/**
 * The Dagu REST client as the read service sees it. The implementation (src/dagu/client.ts) owns the
 * connection pool, timeouts and path escaping; its failures are DaguErrors (src/dagu/errors.ts).
 */
export interface DaguRequest {
  /** Route template below the API base, e.g. `/dag-runs/{name}/{dagRunId}`; also the metrics label. */
  route: string;
  /** Values for the `{…}` placeholders; each is escaped as one path segment. */
  params?: Readonly<Record<string, string>>;
  query?: ReadonlyArray<readonly [string, string]>;
  signal?: CallSignal;
}

export interface DaguResponse {
  status: number;
  /** Parsed JSON body, or `undefined` for an empty body. */
  body: unknown;
}

/** What one readiness probe of Dagu's health route found. */
export interface DaguProbeResult {
  /** Dagu answered its health route, healthy. */
  reachable: boolean;
  /** Why Dagu is not reachable, in words an operator can act on. */
  detail?: string;
  /** Dagu answers, but the gateway cannot use it as configured (e.g. DAGU_API_BASE of the other generation). */
  problem?: string;
  /** The version Dagu reports on its health route. */
  version?: string;
  /** The REST base in use (`/api/v1` for Dagu 2.x, `/api/v2` for 1.x). */
  apiBase?: string;
  /** The generation whose REST dialect is in use. */
  generation?: 1 | 2;
}

export interface DaguClient {
  /**
   * 1 for Dagu 1.x (REST under `/api/v2`), 2 for Dagu 2.x (REST under `/api/v1`). With
   * `DAGU_API_BASE=auto`, the generation found (2 until `ready()` found one).
   */
  readonly generation: 1 | 2;
  /**
   * Resolves once the REST dialect is known (found from Dagu's health routes with auto); rejects with
   * a DaguError. `undefined` when it is known already: a call need not wait a turn for it.
   */
  ready(signal?: CallSignal): Promise<void> | undefined;
  /** The readiness probe (never rejects): reachability, version, dialect and whether it fits. */
  probe(signal: AbortSignal): Promise<DaguProbeResult>;
  /**
   * Performs a GET. Resolves with any HTTP status whose body is JSON or empty; rejects with a DaguError:
   * `unreachable`, `timeout` or `cancelled` when Dagu does not answer, `bad_body` for a body that cannot
   * be read, and `refused_path` without any network call when a path value would be read by Dagu as path
   * structure (contains `/` or `\`, or is `.` or `..`).
   */
  get(request: DaguRequest): Promise<DaguResponse>;
  close(): Promise<void>;
}
