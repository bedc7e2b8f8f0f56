import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, LogLevel } from 'fastify';

type ChildLoggerFactory = FastifyInstance['childLoggerFactory'];
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Write = (...args: unknown[]) => void;

/** Levels whose lines a request logger at `warn` or above drops. */
const QUIET_BELOW_WARN: ReadonlySet<string> = new Set(['warn', 'error', 'fatal', 'silent']);

/**
 * A request's logger on a route whose level drops info, debug and trace lines (the MCP route at `warn`:
 * every call is in the audit log). Those calls return at once, and the real child logger (pino
 * serialises its bindings and rebuilds its level methods, ~15 objects) is made only when a warning or
 * an error is written, by the server's own factory, so that line carries the request id as before.
 */
class DeferredRequestLogger {
  #child: FastifyBaseLogger | undefined;
  readonly level: string;

  constructor(
    private readonly server: FastifyInstance,
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
    private readonly raw: IncomingMessage,
  ) {
    this.level = options.level ?? parent.level;
  }

  private real(): FastifyBaseLogger {
    this.#child ??= this.server.childLoggerFactory.call(
      this.server,
      this.parent,
      this.bindings,
      this.options,
      this.raw,
    );
    return this.#child;
  }

  fatal(...args: unknown[]): void {
    (this.real().fatal as Write)(...args);
  }
  error(...args: unknown[]): void {
    (this.real().error as Write)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real().warn as Write)(...args);
  }
  info(): void {}
  debug(): void {}
  trace(): void {}
  silent(): void {}
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/**
 * The route option that gives each request a DeferredRequestLogger when the route's level drops info
 * lines; `undefined` (Fastify's per-request child logger) at info, debug or trace.
 */
export function deferredRequestLogger(
  app: FastifyInstance,
  level: LogLevel | undefined,
): ChildLoggerFactory | undefined {
  if (level === undefined || !QUIET_BELOW_WARN.has(level)) return undefined;
  return (logger, bindings, options, raw) =>
    new DeferredRequestLogger(app, logger, bindings, options, raw) as unknown as FastifyBaseLogger;
}
