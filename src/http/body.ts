import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { refuse } from './refusals.ts';

/** Codes of the body errors below; `installErrorHandlers` answers them as JSON-RPC parse errors. */
export const INVALID_UTF8 = 'GW_BODY_INVALID_UTF8';
export const INVALID_JSON = 'FST_ERR_CTP_INVALID_JSON_BODY';
export const EMPTY_JSON = 'FST_ERR_CTP_EMPTY_JSON_BODY';

const bodyError = (code: string, message: string) =>
  Object.assign(new Error(message), { code, statusCode: 400 });

/**
 * JSON bodies are checked as bytes before they are text: invalid UTF-8 is refused, never decoded with
 * U+FFFD in place of the bad bytes and forwarded. Otherwise as Fastify's own parser with the app's
 * settings: a leading BOM is dropped, and `__proto__` keys are kept (our validator answers them).
 */
export function installStrictJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body: Buffer, done) => {
    if (body.length === 0) return done(bodyError(EMPTY_JSON, 'The body is empty.'), undefined);
    if (!isUtf8(body)) return done(bodyError(INVALID_UTF8, 'The body is not valid UTF-8.'), undefined);
    const text = body.toString('utf8');
    try {
      done(null, JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text));
    } catch {
      done(bodyError(INVALID_JSON, 'The body is not valid JSON.'), undefined);
    }
  });
}

/** The codings a Content-Encoding header declares, `identity` left out. */
const declaredCodings = (header: string): string[] =>
  header
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '' && part !== 'identity');

/**
 * A route hook (after authentication, before the body is read): a body in a Content-Encoding the
 * gateway does not decode gets 415, never parsed as if it were plain (RFC 7694: the answer names the
 * coding that is accepted).
 */
export function refuseEncodedBodies(
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
) {
  // A callback hook: an async one costs a promise and Fastify's continuation per request.
  const coding = request.headers['content-encoding'];
  const codings = coding === undefined ? undefined : declaredCodings(coding);
  if (codings === undefined || codings.length === 0) {
    done();
    return;
  }
  refuse(reply, 'unsupported_encoding', {
    message: `Unsupported Media Type: Content-Encoding ${codings.join(', ').slice(0, 64)} is not accepted; send the body uncompressed.`,
  });
}
