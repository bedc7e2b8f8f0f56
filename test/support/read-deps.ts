import { UNRESTRICTED_ACCESS } from '../../src/core/access.ts';
import type { DaguClient, DaguRequest, DaguResponse } from '../../src/dagu/types.ts';
import type { TargetDeps } from '../../src/read/definition.ts';
import type { CallContext } from '../../src/read/types.ts';
import type { WorkbookReader } from '../../src/workbook/index.ts';

/** For handler tests of Dagu-backed targets: a workbook reader that must never be called. */
export const NO_WORKBOOK: WorkbookReader = {
  read: () => Promise.reject(new Error('this test does not read workbooks')),
  load: { running: 0, queued: 0, idle: 0, size: 0 },
  hashRates: { SHA1: 1, SHA256: 1, SHA384: 1, SHA512: 1 },
  close: () => Promise.resolve(),
};

/** Target dependencies around a (scripted or real) Dagu client, for handler tests. */
export const depsOf = (dagu: DaguClient): TargetDeps => ({ dagu, workbook: NO_WORKBOOK });

/** A call whose caller may read everything. */
export const OPEN: CallContext = { access: UNRESTRICTED_ACCESS };

export type Responder = (request: DaguRequest) => DaguResponse;

/**
 * A scripted DaguClient for unit tests of the pure mapping around a handler: it answers with bodies
 * shaped like Dagu's (2.x shapes that the real 1.x Dagu in the integration tests cannot produce) and
 * records every request. Behaviour against a real Dagu is tested in test/integration.
 */
export function fakeDagu(generation: 1 | 2, responder: Responder): DaguClient & { calls: DaguRequest[] } {
  const calls: DaguRequest[] = [];
  return {
    generation,
    calls,
    async get(request) {
      calls.push(request);
      return responder(request);
    },
    async ready() {},
    async probe() {
      return { reachable: true, generation };
    },
    async close() {},
  };
}
