import type { DaguClient } from '../../dagu/types.ts';
import type { WorkbookReader } from '../../workbook/index.ts';
import type { CallContext, ResolvedRead } from '../types.ts';
import type { FinishedLogCache } from './finished-logs.ts';

/** What every target handler is given besides the request: the Dagu client, the workbook reader, the cache. */
export interface TargetDeps {
  dagu: DaguClient;
  workbook: WorkbookReader;
  /** Finished step-log windows, shared by all callers (absent: CACHE_MAX_BYTES=0). */
  logCache?: FinishedLogCache;
}

/** One read in progress: the validated request, the deps, and the caller's access and signal. */
export interface ReadScope {
  request: ResolvedRead;
  deps: TargetDeps;
  call: CallContext;
}
