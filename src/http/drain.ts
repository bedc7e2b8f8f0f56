import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse, Http2Session } from 'node:http2';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { LinkedList } from '../core/linked-list.ts';
import type { ReadinessCheck } from './health.ts';

/**
 * The drain before a planned stop (SIGTERM), so that a load balancer moves callers away without
 * losing one call:
 * 1. `app.drain()` turns `/readyz` to 503 at once (the `draining` check) and every answer from then
 *    on closes its connection (keep-alive clients and proxies open a new one, to a ready replica);
 *    answers already being prepared close theirs too;
 * 2. for `drainMs` the gateway keeps serving everything that still arrives (a proxy needs a few
 *    health checks to notice);
 * 3. `app.drain()` resolves; `app.close()` then stops accepting, closes idle connections (again every
 *    100 ms, as in-flight answers finish) and waits for the calls in flight (bounded by
 *    REQUEST_TIMEOUT_MS).
 *
 * HTTP/2 sessions (native TLS) are told at step 1: each gets GOAWAY (NO_ERROR, the last stream it
 * accepted), finishes its streams in flight and closes; a session opened during the drain gets it
 * once its first answer is sent (HTTP/1.1's `Connection: close`), and any left at step 3 (one that
 * never asked anything) get it then. Clients open their next session to a ready replica.
 */
export interface DrainOptions {
  drainMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts draining; resolves after the drain period. Calling it again returns the same promise. */
    drain(): Promise<void>;
    /** `/readyz`'s check: failing from the moment draining begins. */
    drainReadiness: ReadinessCheck;
  }
}

async function drainConcern(app: FastifyInstance, options: DrainOptions): Promise<void> {
  let drained: Promise<void> | undefined;
  // A list, not a Set: a Set churned on every request keeps old requests alive (core/linked-list.ts).
  const inFlight = new LinkedList<ServerResponse>();
  const sessions = new Set<Http2Session>();
  app.server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const closeAfter = (response: ServerResponse) => {
    if (response.req.httpVersionMajor === 1) {
      if (!response.headersSent) response.shouldKeepAlive = false;
      return;
    }
    // HTTP/2: GOAWAY once this answer is sent; the streams already accepted still finish.
    const { session } = (response as unknown as Http2ServerResponse).stream;
    response.once('finish', () => session?.close());
  };
  const goAway = () => {
    for (const session of sessions) session.close();
  };

  // A callback hook: an async one costs a promise and Fastify's continuation per request.
  app.addHook('onRequest', (_request, reply, done) => {
    if (drained !== undefined) closeAfter(reply.raw);
    else {
      const link = inFlight.push(reply.raw);
      // `on`, not `once`: a response closes once, and once's wrapper is two objects per request.
      reply.raw.on('close', () => inFlight.remove(link));
    }
    done();
  });

  app.decorate('drainReadiness', {
    name: 'draining',
    check: async () =>
      drained === undefined ? { ok: true } : { ok: false, detail: 'the gateway is stopping' },
  } satisfies ReadinessCheck);

  app.decorate('drain', () => {
    drained ??= new Promise<void>((resolve) => {
      app.log.info({ drainMs: options.drainMs }, 'draining: /readyz answers 503, calls are still served');
      for (const response of inFlight.values()) closeAfter(response);
      inFlight.clear();
      goAway();
      setTimeout(resolve, options.drainMs).unref();
    });
    return drained;
  });

  // Connections that were busy when the listener closed are closed as soon as they fall idle.
  app.addHook('preClose', async () => {
    // Node 24 closes HTTP/2 sessions when the server closes; Node 20 and 22 leave them open.
    goAway();
    const server = app.server as typeof app.server & { closeIdleConnections?: () => void };
    const sweeper = setInterval(() => server.closeIdleConnections?.(), 100);
    sweeper.unref();
    server.once('close', () => clearInterval(sweeper));
  });
}

export const drainPlugin = fp(drainConcern, { name: 'dagu-mcp-drain', fastify: '5.x' });
