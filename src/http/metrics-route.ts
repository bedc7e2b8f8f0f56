import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GatewayMetrics } from '../metrics/metrics.ts';

/** `/metrics`: the Prometheus scrape, public like the health routes (no caller data in any label). */
export const metricsRoutePlugin = fp(
  async (app: FastifyInstance, options: { metrics: Pick<GatewayMetrics, 'contentType' | 'render'> }) => {
    app.get('/metrics', async (_request, reply) =>
      reply.type(options.metrics.contentType).send(await options.metrics.render()),
    );
  },
  { name: 'dagu-mcp-metrics-route', fastify: '5.x' },
);
