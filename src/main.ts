import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

/** Start-up and graceful shutdown. Invalid configuration exits with one line per problem. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const gateway = await buildApp(config);
  const { app } = gateway;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    // In-flight calls get a grace period; a stuck one must not keep the process alive.
    setTimeout(() => {
      app.log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, 10_000).unref();
    await gateway.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  const address = await app.listen({ host: config.host, port: config.port });
  app.log.info(
    { address, mcp: `${address}${config.mcpPath}`, dagu: config.dagu.url },
    'dagu-mcp-gateway listening',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `dagu-mcp-gateway failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
