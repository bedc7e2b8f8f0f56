#!/usr/bin/env node
import pino from 'pino';
import { keygen } from './auth/keygen.ts';
import { CommandLineError, helpText, loadDotEnv, parseCommandLine } from './cli.ts';
import { ConfigError, type GatewayConfig, loadConfig } from './config.ts';
import { routeConsoleToLog } from './console-log.ts';
import { displayUrl } from './core/display-url.ts';
import type { Log } from './core/log.ts';
import { createGatewayCore, loadTracing } from './gateway-core.ts';
import { settleMemoryAfterBursts } from './memory-settle.ts';
import { serveMcpOverStdio } from './stdio/serve.ts';
import { GATEWAY_VERSION } from './version.ts';

/**
 * The `dagu-mcp-gateway` command (`npm start`, the package's bin): settings from flags, the
 * environment and `.env`, in that order of precedence. Invalid settings exit 2 with one line per
 * problem; `--stdio` serves one local MCP host on stdin/stdout, otherwise Streamable HTTP.
 */
async function main(): Promise<void> {
  let config: GatewayConfig;
  let stdio: boolean;
  try {
    const command = parseCommandLine(process.argv.slice(2));
    if (command.kind === 'help') return void process.stdout.write(helpText(GATEWAY_VERSION));
    if (command.kind === 'version') return void process.stdout.write(`${GATEWAY_VERSION}\n`);
    if (command.kind === 'keygen') {
      process.exitCode = keygen(command.argv);
      return;
    }
    stdio = command.stdio;
    loadDotEnv();
    // A stdio host shows our stderr beside its own output: there the log defaults to warnings and errors.
    config = loadConfig({ ...(stdio ? { LOG_LEVEL: 'warn' } : {}), ...process.env, ...command.settings });
  } catch (error) {
    if (error instanceof ConfigError || error instanceof CommandLineError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const libraryOutput = routeConsoleToLog();
  const gateway = stdio ? await serveStdio(config) : await serveHttp(config);
  libraryOutput.attach(gateway.log);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // SIGTERM is a planned stop (an orchestrator, a rolling restart): drain first. SIGINT and a
    // closed stdin stop at once; in-flight calls still finish.
    const drain = signal === 'SIGTERM';
    const drainMs = drain ? gateway.drainMs : 0;
    // In-flight calls are bounded by REQUEST_TIMEOUT_MS; a stuck close must not keep the process alive.
    const forcedMs = drainMs + gateway.requestTimeoutMs + FORCED_EXIT_MARGIN_MS;
    gateway.log.info({ signal, drainMs }, 'shutting down');
    setTimeout(() => {
      gateway.log.error({ forcedMs }, 'shutdown took longer than the drain and request timeout; exiting');
      process.exit(1);
    }, forcedMs).unref();
    const started = performance.now();
    await (drain ? gateway.drainAndClose() : gateway.close());
    gateway.log.info({ signal, ms: Math.round(performance.now() - started) }, 'stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A stdio host ends the session by closing our stdin.
  if (stdio) process.stdin.once('close', () => void stop('stdin closed'));
}

/** Time after the drain and the request timeout before a stop is forced (exit 1). */
const FORCED_EXIT_MARGIN_MS = 5_000;

/** A running transport: its log, and how to stop it and release everything. */
interface Serving {
  log: Log;
  close(): Promise<void>;
  /** SIGTERM: drain (HTTP: DRAIN_MS of `/readyz` 503 while serving), then close(). */
  drainAndClose(): Promise<void>;
  drainMs: number;
  requestTimeoutMs: number;
}

async function serveHttp(config: GatewayConfig): Promise<Serving> {
  // Loaded here so that `--stdio` never loads Fastify or the HTTP plugins.
  const { buildApp } = await import('./app.ts');
  const gateway = await buildApp(config);
  const address = await gateway.app.listen({ host: config.host, port: config.port });
  // A flood of requests held for their time bounds leaves garbage an idle process never collects.
  settleMemoryAfterBursts(gateway.app.log);
  gateway.app.log.info(
    { address, mcp: `${address}${config.mcpPath}`, dagu: displayUrl(config.dagu.url) },
    'dagu-mcp-gateway listening',
  );
  return {
    log: gateway.app.log,
    close: gateway.close,
    drainAndClose: gateway.drainAndClose,
    drainMs: config.http.drainMs,
    requestTimeoutMs: config.http.requestTimeoutMs,
  };
}

/**
 * stdout carries the protocol: the log, and an audit log set to stdout, go to stderr. Nothing
 * listens on HTTP, so HOST (and the anonymous-access rule that depends on it) does not apply, and
 * nothing serves /readyz, /metrics or the HTTP rate limit: no periodic probe, no Redis connection.
 */
async function serveStdio(config: GatewayConfig): Promise<Serving> {
  const tracing = await loadTracing(config);
  const log = pino(
    { level: config.logLevel, ...(tracing === undefined ? {} : { mixin: tracing.logFields }) },
    pino.destination(2),
  );
  const core = createGatewayCore(
    {
      ...config,
      auditLog: config.auditLog === 'stdout' ? 'stderr' : config.auditLog,
      readiness: { ...config.readiness, probeIntervalMs: 0 },
    },
    log,
    { tracing },
  );
  const connection = serveMcpOverStdio({
    traceContext: tracing !== undefined,
    createServer: core.createMcpServer,
    callDeadlineMs: config.limits.callDeadlineMs,
    onError: (error) => log.debug({ err: error }, 'mcp stdio transport error'),
  });
  log.info(
    { dagu: displayUrl(config.dagu.url) },
    'dagu-mcp-gateway serving MCP on stdio (no HTTP listener: the caller is the local user)',
  );
  const close = async () => {
    await connection.close();
    await core.close();
    await tracing?.shutdown();
  };
  // No listener to drain: a stdio host is the only caller.
  return { log, close, drainAndClose: close, drainMs: 0, requestTimeoutMs: config.http.requestTimeoutMs };
}

main().catch((error: unknown) => {
  process.stderr.write(
    `dagu-mcp-gateway failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
