/**
 * The slice of a pino/Fastify logger the auth, audit and security modules use. Fastify's `app.log`
 * satisfies it; tests pass a recorder. Messages never carry a credential.
 */
export interface Log {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
