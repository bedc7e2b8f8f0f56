/**
 * Calls the dags and runs target handlers directly against the real, seeded Dagu: input goes through
 * the real input layer (resolveReadInput), the handler gets the real Dagu client.
 */

import { type AccessPolicy, UNRESTRICTED_ACCESS } from '../../src/core/access.ts';
import { createDaguClient } from '../../src/dagu/client.ts';
import type { DaguClient } from '../../src/dagu/types.ts';
import type { TargetHandler } from '../../src/read/definition.ts';
import { ReadError } from '../../src/read/errors.ts';
import { resolveReadInput } from '../../src/read/input/index.ts';
import { dagTargets } from '../../src/read/targets/dags.ts';
import { handlersOf } from '../../src/read/targets/index.ts';
import { runTargets } from '../../src/read/targets/runs.ts';
import type { ResolvedRead } from '../../src/read/types.ts';
import { daguApi, type TestDagu } from './dagu.ts';
import { depsOf } from './read-deps.ts';

export const HANDLERS: Readonly<Record<string, TargetHandler>> = handlersOf({ ...dagTargets, ...runTargets });

export type Data = Record<string, unknown>;

export function clientFor(
  dagu: Pick<TestDagu, 'url' | 'apiBase'>,
  url = dagu.url,
  token?: string,
): DaguClient {
  return createDaguClient({ url, apiBase: dagu.apiBase, token, timeoutMs: 10_000 });
}

export interface Reader {
  /** Resolves the raw tool input and runs the handler; returns `data` and the resolved request. */
  read(input: Record<string, unknown>, access?: AccessPolicy): Promise<{ data: Data; request: ResolvedRead }>;
  /** Like `read`, but expects a ReadError and returns it. */
  fail(input: Record<string, unknown>, access?: AccessPolicy): Promise<ReadError>;
}

export function readerFor(dagu: DaguClient): Reader {
  async function read(input: Record<string, unknown>, access: AccessPolicy = UNRESTRICTED_ACCESS) {
    const request = resolveReadInput(input);
    const handler = HANDLERS[request.target];
    if (handler === undefined) throw new Error(`no handler for ${request.target} in this harness`);
    const result = await handler(request, depsOf(dagu), { access });
    return { data: result.data, request };
  }
  return {
    read,
    async fail(input, access) {
      try {
        await read(input, access);
      } catch (error) {
        if (error instanceof ReadError) return error;
        throw error;
      }
      throw new Error(`expected ${JSON.stringify(input)} to fail`);
    },
  };
}

/** An access policy allowing only these DAG names. */
export function onlyDags(...names: string[]): AccessPolicy {
  return {
    canReadDag: (name) => names.includes(name),
    canReadWorkspace: () => true,
    readsWorkbooks: true,
    unrestricted: false,
    everyWorkspace: true,
    exactWorkspaces: undefined,
  };
}

/** Counts of DAGs and of all runs (every date), read straight from Dagu. */
export async function daguCounts(dagu: TestDagu): Promise<{ dags: number; runs: number }> {
  const dags = (await daguApi(dagu, '/dags?perPage=200')).body as { pagination: { totalRecords: number } };
  const runs = (await daguApi(dagu, '/dag-runs?fromDate=946684800')).body as { dagRuns: unknown[] | null };
  return { dags: dags.pagination.totalRecords, runs: (runs.dagRuns ?? []).length };
}

export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
