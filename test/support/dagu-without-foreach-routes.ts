import type { DaguRequest, DaguResponse } from '../../src/dagu/types.ts';

/**
 * A Dagu without foreach REST routes, for handler tests: run details of one run (2.x node shapes: a
 * foreach step `each` with `executorConfig.type: "foreach"` and a plain step `plain`), its DAG, and
 * the router's plain-text 404 for every foreach route (what Dagu v2.15.1 and every 1.x answer).
 */
export function withoutForeachRoutes(run: { name: string; dagRunId: string }) {
  return (request: DaguRequest): DaguResponse => {
    if (request.route.includes('/foreach')) return { status: 404, body: '404 page not found' };
    if (request.route === '/dags/{fileName}') {
      return request.params?.fileName === run.name
        ? { status: 200, body: { dag: { name: run.name } } }
        : { status: 404, body: { code: 'not_found', message: 'DAG not found' } };
    }
    if (request.route === '/dag-runs/{name}/{dagRunId}') {
      if (request.params?.name !== run.name || request.params?.dagRunId !== run.dagRunId) {
        return { status: 404, body: { code: 'not_found', message: 'dag-run not found' } };
      }
      return {
        status: 200,
        body: {
          dagRunDetails: {
            name: run.name,
            dagRunId: run.dagRunId,
            status: 4,
            statusLabel: 'succeeded',
            nodes: [
              {
                step: { name: 'each', executorConfig: { type: 'foreach' } },
                status: 4,
                statusLabel: 'succeeded',
                doneCount: 3,
                subRuns: [],
              },
              { step: { name: 'plain', commands: [] }, status: 4, statusLabel: 'succeeded', subRuns: [] },
            ],
          },
        },
      };
    }
    throw new Error(`unexpected request ${request.route}`);
  };
}
