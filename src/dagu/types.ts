/**
 * The Dagu REST client as the read service sees it. The implementation (src/dagu/client.ts) owns the
 * connection pool, timeouts, path escaping and the mapping of transport failures to ReadError.
 */
export interface DaguRequest {
  /** Route template below the API base, e.g. `/dag-runs/{name}/{dagRunId}`; also the metrics label. */
  route: string;
  /** Values for the `{…}` placeholders; each is escaped as one path segment. */
  params?: Readonly<Record<string, string>>;
  query?: ReadonlyArray<readonly [string, string]>;
  signal?: AbortSignal;
}

export interface DaguResponse {
  status: number;
  /** Parsed JSON body, or `undefined` for an empty body. */
  body: unknown;
}

export interface DaguClient {
  /** 1 for Dagu 1.x (REST under `/api/v2`), 2 for Dagu 2.x (REST under `/api/v1`). */
  readonly generation: 1 | 2;
  /**
   * Performs a GET. Resolves with any HTTP status whose body is JSON or empty; rejects with a ReadError
   * (`resource_unavailable`) when Dagu is unreachable or times out, (`internal_error`) for a body that is
   * not JSON, and (`resource_not_found`) without any network call when a path value would be read by
   * Dagu as path structure (contains `/` or `\`, or is `.` or `..`).
   */
  get(request: DaguRequest): Promise<DaguResponse>;
  /** True when Dagu answers its health route. */
  ping(signal?: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}
