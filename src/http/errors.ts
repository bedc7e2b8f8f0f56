import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { INVALID_JSON, INVALID_UTF8, installStrictJsonParser } from './body.ts';
import { type RefusalName, refuse } from './refusals.ts';

const MESSAGES: Readonly<Record<string, string>> = {
  [INVALID_JSON]: 'Parse error: the body is not valid JSON.',
  [INVALID_UTF8]: 'Parse error: the body is not valid UTF-8.',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large.',
};

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
    const onMcp = request.url.split('?', 1)[0] === mcpPath;
    const refusal: RefusalName = onMcp
      ? parseError
        ? 'parse_error'
        : clientFault
          ? 'rpc_bad_request'
          : 'rpc_internal_error'
      : clientFault
        ? 'bad_request'
        : 'internal_error';
    const message = clientFault ? MESSAGES[error.code] : undefined;
    return refuse(reply, refusal, { status, ...(message === undefined ? {} : { message }) });
  });
  app.setNotFoundHandler((_request, reply) => refuse(reply, 'not_found'));
}

/** How bodies are read and how failures answer, for the whole app: strict JSON, JSON errors. */
export const httpAnswersPlugin = fp(
  async (app: FastifyInstance, options: { mcpPath: string }) => {
    installErrorHandlers(app, options.mcpPath);
    installStrictJsonParser(app);
  },
  { name: 'dagu-mcp-http-answers', fastify: '5.x' },
);
