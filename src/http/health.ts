import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { DaguReadiness, DaguReadinessSnapshot } from '../dagu/readiness.ts';

/** A readiness check that is cheap and local (no network): evaluated on every `/readyz`. */
export interface ReadinessCheck {
  name: string;
  check(signal?: AbortSignal): Promise<{ ok: boolean; detail?: string }>;
}

/** The body of `/readyz`: overall status, the reason when not ready, what is known of Dagu, each check. */
export interface ReadinessBody {
  status: 'ready' | 'not_ready';
  reason?: string;
  dagu: DaguReadinessSnapshot;
  checks: Array<{ name: string; ok: boolean; detail?: string }>;
}

export interface HealthPluginOptions {
  /** Dagu's readiness, kept by the gateway core (which also closes it). */
  dagu: DaguReadiness;
  /** Local checks (the audit log's file), each evaluated on every `/readyz`. */
  checks: ReadinessCheck[];
}

/**
 * `/healthz`: the process is up (never depends on Dagu). `/readyz`: Dagu answered its last probe and
 * every local check passes; 503 otherwise, with the reason. Neither waits for a Dagu request.
 */
async function healthRoutes(app: FastifyInstance, options: HealthPluginOptions): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const dagu = await options.dagu.current();
    const local = await Promise.all(
      options.checks.map(async ({ name, check }) => {
        try {
          return { name, ...(await check()) };
        } catch {
          return { name, ok: false, detail: 'check failed' };
        }
      }),
    );
    const daguProblem = dagu.reachable ? dagu.problem : (dagu.detail ?? 'Dagu is unreachable');
    const checks = [
      {
        name: 'dagu',
        ok: daguProblem === undefined,
        ...(daguProblem === undefined ? {} : { detail: daguProblem }),
      },
      ...local,
    ];
    const failed = checks.filter((check) => !check.ok);
    const body: ReadinessBody = {
      status: failed.length === 0 ? 'ready' : 'not_ready',
      ...(failed.length === 0
        ? {}
        : { reason: failed.map((check) => `${check.name}: ${check.detail ?? 'not ready'}`).join('; ') }),
      dagu,
      checks,
    };
    return reply.code(failed.length === 0 ? 200 : 503).send(body);
  });
}

/** `/healthz` and `/readyz`: public (no auth hook), answered from cached state. */
export const healthPlugin = fp(healthRoutes, { name: 'dagu-mcp-health', fastify: '5.x' });
