import type { DaguClient } from '../dagu/types.ts';
import type { WorkbookReader } from '../workbook/index.ts';
import type { CallContext, ResolvedRead, TargetResult } from './types.ts';

/** What target handlers may use. The read service builds it once at start-up. */
export interface TargetDeps {
  dagu: DaguClient;
  workbook: WorkbookReader;
}

/** One read target: takes a validated request, returns the contract's `data` or throws a ReadError. */
export type TargetHandler = (
  request: ResolvedRead,
  deps: TargetDeps,
  call: CallContext,
) => Promise<TargetResult>;
