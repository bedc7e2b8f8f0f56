import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GatewayTracing } from './tracing.ts';

/**
 * Tracing's share of the HTTP gateway: it owns the tracer provider's lifetime, exporting what is still
 * buffered when the app closes. Registered (and loaded) only when the `OTEL_*` variables turn tracing on.
 */
export const tracingPlugin = fp(
  async (app: FastifyInstance, options: { tracing: GatewayTracing }) => {
    app.addHook('onClose', async () => {
      try {
        await options.tracing.shutdown();
      } catch (error) {
        app.log.warn({ err: error }, 'tracing: the last spans could not be exported');
      }
    });
  },
  { name: 'dagu-mcp-tracing', fastify: '5.x' },
);
