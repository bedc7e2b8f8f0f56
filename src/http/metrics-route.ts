import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GatewayMetrics } from '../metrics/metrics.ts';

/** `/metrics`: the Prometheus scrape, public like the health routes (no caller data in any label). */
export const metricsRoutePlugin = fp(
  async (app: FastifyInstance, options: { metrics: Pick<GatewayMetrics, 'exposition'> }) => {
    app.get('/metrics', async (request, reply) => {
      const { contentType, body } = await options.metrics.exposition(request.headers.accept);
      return reply.type(contentType).send(body);
    });
  },
  { name: 'dagu-mcp-metrics-route', fastify: '5.x' },
);
