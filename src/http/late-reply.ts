import type { LogFn, Logger } from 'pino';

/** Fastify's error for an answer to a request that was already answered (`reply.send` twice). */
const ALREADY_SENT = 'FST_ERR_REP_ALREADY_SENT';

const WARN = 40;

const isAlreadySent = (first: unknown): boolean =>
  (first as { err?: { code?: unknown } } | null)?.err?.code === ALREADY_SENT;

/**
 * A late reply: something answers a request the gateway had already answered, typically a refusal
 * sent before the request's body arrived (408, 503) and then the body reader's own failure when
 * the stream or connection closes. Fastify logs each at warn with a stack trace (install paths,
 * one line per refused request in a flood); here each is counted and logged once at debug, without
 * the stack. Installed as pino's `hooks.logMethod` on the application log.
 */
export function lateReplyLogHook(
  counted: () => void,
): (this: Logger, args: Parameters<LogFn>, method: LogFn, level: number) => void {
  return function logMethod(args, method, level) {
    if (level !== WARN || !isAlreadySent(args[0])) return method.apply(this, args);
    counted();
    this.debug({ lateReply: true }, 'late reply dropped: the request was already answered');
  };
}
