// `npm run demo`: a local Dagu (the pinned release, built once into a cache) with sample DAGs and runs,
// and the gateway in front of it on 127.0.0.1. Prints the MCP URL and a client configuration; Ctrl-C
// stops both. It reuses the test rig, so the demo shows exactly what the tests read.
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { DAGU_PIN, seedDagu, startDagu } from '../test/support/dagu.ts';

const port = process.env.PORT ?? '8090';
process.stdout.write(`Starting Dagu ${DAGU_PIN.module}@${DAGU_PIN.version} (built on first use)...\n`);
const dagu = await startDagu();
const seed = await seedDagu(dagu);
const config = loadConfig({
  ...process.env,
  HOST: '127.0.0.1',
  PORT: port,
  DAGU_URL: dagu.url,
  DAGU_API_BASE: dagu.apiBase,
  AUDIT_LOG: process.env.AUDIT_LOG ?? 'stdout',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
const gateway = await buildApp(config);
await gateway.app.listen({ host: config.host, port: config.port });
const mcpUrl = `http://127.0.0.1:${config.port}${config.mcpPath}`;

process.stdout.write(`
Dagu:     ${dagu.url} (UI and REST; ${Object.keys(seed.dags).length} sample DAGs, ${Object.keys(seed.runs).length} runs)
Gateway:  http://127.0.0.1:${config.port}  (health /healthz, readiness /readyz, metrics /metrics)
MCP URL:  ${mcpUrl}

Client configuration (e.g. .mcp.json or your MCP host's server list):
${JSON.stringify({ mcpServers: { dagu: { type: 'http', url: mcpUrl } } }, null, 2)}

Try: {"target":"runs"}, {"target":"run","name":"${seed.dags.fails}","dagRunId":"latest"},
     {"uri":"dagu://reference/read-tool"}
No authentication is configured (loopback only). Ctrl-C stops the gateway and Dagu.
`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await gateway.close();
  await dagu.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
