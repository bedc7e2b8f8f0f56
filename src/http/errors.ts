import type { FastifyError, FastifyInstance } from 'fastify';
import { INVALID_JSON, INVALID_UTF8 } from './body.ts';

/** JSON-RPC error codes for failures Fastify raises before the MCP layer sees a request. */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;
const INTERNAL_ERROR = -32603;

/**
 * Every failure answers JSON: on the MCP endpoint a JSON-RPC error object (clients parse nothing
 * else), elsewhere `{code, message}`. Messages are fixed texts: no stack trace or internal detail.
 */
export function installErrorHandlers(app: FastifyInstance, mcpPath: string): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    const clientFault = status < 500;
    if (!clientFault) request.log.error({ err: error }, 'request failed');
    const parseError = error.code === INVALID_JSON || error.code === INVALID_UTF8;
    const message =
      error.code === INVALID_JSON
        ? 'Parse error: the body is not valid JSON.'
        : error.code === INVALID_UTF8
          ? 'Parse error: the body is not valid UTF-8.'
          : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'Request body is too large.'
            : clientFault
              ? 'Bad request.'
              : 'Internal error.';
    if (request.url.split('?')[0] === mcpPath) {
      const code = parseError ? PARSE_ERROR : clientFault ? SERVER_ERROR : INTERNAL_ERROR;
      return reply.code(status).send({ jsonrpc: '2.0', error: { code, message }, id: null });
    }
    return reply.code(status).send({ code: clientFault ? 'bad_request' : 'internal_error', message });
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send({ code: 'not_found', message: 'Not found.' }),
  );
}
