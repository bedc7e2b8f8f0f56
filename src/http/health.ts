import type { FastifyInstance } from 'fastify';

export interface ReadinessCheck {
  name: string;
  check(signal: AbortSignal): Promise<{ ok: boolean; detail?: string }>;
}

/** `/healthz`: the process is up. `/readyz`: every dependency answers (503 otherwise, with which failed). */
export async function healthRoutes(
  app: FastifyInstance,
  options: { checks: ReadinessCheck[] },
): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const signal = AbortSignal.timeout(3000);
    const results = await Promise.all(
      options.checks.map(async ({ name, check }) => {
        try {
          return { name, ...(await check(signal)) };
        } catch {
          return { name, ok: false, detail: 'check failed' };
        }
      }),
    );
    const ready = results.every((result) => result.ok);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: results });
  });
}
