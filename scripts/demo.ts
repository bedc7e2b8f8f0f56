// `npm run demo`: a local Dagu (the pinned 2.x release, built once into a cache) with sample DAGs, runs
// and Wiki pages, and the gateway in front of it on 127.0.0.1. Prints the MCP URL and a client
// configuration; Ctrl-C stops both. It reuses the test rig, so the demo shows exactly what the tests read.
// `npm run demo -- --oauth` makes the gateway its own OAuth authorization server (AUTH_SERVER=builtin),
// signing users in at a local OpenID provider that has no registration endpoint (oidc-provider as the
// built-in server's tests configure it, standing in for Entra ID, Google or Cognito), and walks the MCP
// authorization flow once.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { routeConsoleToLog } from '../src/console-log.ts';
import { BrowserAgent, GatewayOAuthProvider } from '../test/support/builtin-as.ts';
import {
  DAGU_PINS,
  type DaguInstance,
  DEFAULT_GENERATION,
  daguBinary,
  parseGeneration,
  seedDagu,
  startDagu,
} from '../test/support/dagu.ts';
import { connectWithOAuth } from '../test/support/oauth-clients.ts';
import type { AuthorizationServer } from '../test/support/oidc-provider.ts';
import { fixtureDir, writeSmallWorkbook } from '../test/support/workbook-fixtures.ts';
import { clientSnippets, INSPECTOR_WEB_NPX } from './client-snippets.ts';

const port = process.env.PORT ?? '8090';
const HOST = '127.0.0.1';
const oauth = process.argv.includes('--oauth');
const generation =
  parseGeneration(process.env.DEMO_DAGU_GENERATION, 'DEMO_DAGU_GENERATION') ?? DEFAULT_GENERATION;
const pin = DAGU_PINS[generation];

/** Gets the Dagu binary; while a first build runs, says so every 15 s with the time it takes. */
async function getBinary(): Promise<void> {
  const started = Date.now();
  const ticker = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    process.stdout.write(
      `  still building Dagu ${pin.version}: ${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s so far (the first build takes about 4 minutes on 2 cores; later starts take seconds)\n`,
    );
  }, 15_000);
  try {
    await daguBinary(generation, (line) => process.stdout.write(`  ${line}\n`));
  } finally {
    clearInterval(ticker);
  }
}

/** One line naming the busy port and the setting that moves the demo, never a stack trace. */
function portInUse(): never {
  const next = Number(port) + 1;
  process.stderr.write(
    `demo: port ${port} on ${HOST} is already in use (another demo or gateway?); start this one on another port: PORT=${next} npm run demo${oauth ? ' -- --oauth' : ''}\n`,
  );
  process.exit(1);
}

/** Whether the gateway's port is free, asked before minutes of Dagu build and seeding. */
async function portIsFree(): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen({ host: HOST, port: Number(port), exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

if (Number(port) !== 0 && !(await portIsFree())) portInUse();

/**
 * Until the banner is out, what the gateway writes to stdout (its log, the audit lines of the OAuth
 * walk) waits, and then follows it: the banner stays in one piece.
 */
const print = process.stdout.write.bind(process.stdout);
const heldOutput: Array<Parameters<typeof print>> = [];
function holdGatewayOutput(): void {
  process.stdout.write = ((...args: Parameters<typeof print>) => {
    heldOutput.push(args);
    return true;
  }) as typeof process.stdout.write;
}
function releaseGatewayOutput(): void {
  process.stdout.write = print;
  for (const args of heldOutput.splice(0)) print(...args);
}

print(`Starting Dagu ${pin.module}@${pin.version} (built on first use)...\n`);
let dagu: DaguInstance;
try {
  await getBinary();
  dagu = await startDagu({ generation });
} catch (error) {
  // One line saying what is missing (e.g. Go), not a stack trace.
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.trim().split('\n').at(-1) ?? message;
  process.stderr.write(`demo: ${reason.replace(/^build-dagu: /, '')}\n`);
  process.exit(1);
}
const seedStarted = Date.now();
const seed = await seedDagu(dagu);
const wikiPages = seed.v2?.wiki.pages.length ?? 0;
print(`Seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s.\n`);
// Workbooks are off until a folder is opened: the demo opens a temporary one with a sample workbook.
const workbooks = await fixtureDir('demo-workbooks');
await writeSmallWorkbook(`${workbooks.dir}/sample.xlsx`);
const publicUrl = `http://${HOST}:${port}`;
const demoUser = { login: 'demo', password: randomBytes(9).toString('base64url') };
holdGatewayOutput();
// What libraries print with console.* goes through the gateway's JSON log, as under `npm start`: the
// SDK's notice that JSON responses drop mid-call notifications is a debug line, not a raw one, and so
// is oidc-provider's warning on Node 20, printed as it is imported.
const libraryOutput = routeConsoleToLog();
/** The OpenID provider users sign in at (--oauth), and the built-in server's state folder. */
let upstream: AuthorizationServer | undefined;
let oauthState: Awaited<ReturnType<typeof fixtureDir>> | undefined;
const UPSTREAM_CLIENT_ID = 'dagu-mcp-gateway';
const upstreamSecret = randomBytes(24).toString('base64url');
if (oauth) {
  // Loaded only here: oidc-provider prints a warning on Node 20 as soon as it is imported.
  const { startAuthorizationServer } = await import('../test/support/oidc-provider.ts');
  const { CALLBACK_PATH } = await import('../src/oauth/provider.ts');
  // No registration endpoint, no resource indicators: one confidential client for the gateway, as an
  // administrator registers it at Entra ID, Google or Cognito.
  upstream = await startAuthorizationServer({
    mcpFeatures: false,
    accounts: { [demoUser.login]: demoUser.password },
    accountClaims: { [demoUser.login]: { email: `${demoUser.login}@example.com` } },
    clients: [
      {
        client_id: UPSTREAM_CLIENT_ID,
        client_secret: upstreamSecret,
        redirect_uris: [`${publicUrl}${CALLBACK_PATH}`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
  });
  oauthState = await fixtureDir('demo-oauth-state');
}
/** MCP Inspector's web UI; the loopback rule admits it, an explicit ALLOWED_ORIGINS gets it added. */
const INSPECTOR_ORIGIN = 'http://localhost:6274';
/** The step of the OAuth walk that prints the token the Inspector lines carry. */
const TOKEN_STEP = 5;
const allowedOrigins = process.env.ALLOWED_ORIGINS;
const config = loadConfig({
  ...process.env,
  ...(allowedOrigins === undefined ||
  allowedOrigins.split(',').some((entry) => entry.trim() === INSPECTOR_ORIGIN)
    ? {}
    : { ALLOWED_ORIGINS: `${allowedOrigins},${INSPECTOR_ORIGIN}` }),
  HOST,
  PORT: port,
  DAGU_URL: dagu.url,
  DAGU_API_BASE: dagu.apiBase,
  WORKBOOK_ROOTS: process.env.WORKBOOK_ROOTS ?? workbooks.dir,
  AUDIT_LOG: process.env.AUDIT_LOG ?? 'stdout',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  ...(upstream && oauthState
    ? {
        PUBLIC_URL: publicUrl,
        AUTH_SERVER: 'builtin',
        OAUTH_UPSTREAM_ISSUER: upstream.issuer,
        OAUTH_UPSTREAM_CLIENT_ID: UPSTREAM_CLIENT_ID,
        OAUTH_UPSTREAM_CLIENT_SECRET: upstreamSecret,
        OAUTH_UPSTREAM_SCOPES: 'openid',
        OAUTH_STATE_DIR: oauthState.dir,
        // The token the Inspector lines carry lasts an hour (the longest the setting allows).
        OAUTH_ACCESS_TOKEN_TTL_S: process.env.OAUTH_ACCESS_TOKEN_TTL_S ?? '3600',
      }
    : {}),
});
// The log goes through process.stdout (not straight to its file descriptor), so it waits for the banner.
const gateway = await buildApp(config, { logger: { stream: process.stdout } });
libraryOutput.attach(gateway.app.log);

/** Stops what the demo started, the gateway first. */
async function closeAll(): Promise<void> {
  await gateway.close();
  await upstream?.stop();
  await dagu.stop();
  await workbooks.cleanup();
  await oauthState?.cleanup();
}
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await closeAll();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

try {
  await gateway.app.listen({ host: config.host, port: config.port });
} catch (error) {
  // Taken since the check at start-up (a second demo started at the same time).
  if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
  heldOutput.length = 0;
  process.stdout.write = print;
  await closeAll();
  portInUse();
}
const mcpUrl = `http://${HOST}:${config.port}${config.mcpPath}`;
const { apiKeysFile, jwtSecret, jwtPublicKey, jwksUrl } = config.auth;
const authenticated = [apiKeysFile, jwtSecret, jwtPublicKey, jwksUrl].some((value) => value !== undefined);
/** What callers present: nothing (anonymous), a credential of the operator's (AUTH_*), or an OAuth token. */
const access = oauth ? 'oauth' : authenticated ? 'credential' : 'anonymous';
const walk = upstream === undefined ? undefined : await walkOAuthFlow(upstream);
/** The bearer the printed lines carry: a placeholder for the operator's credential, the walk's token. */
const bearer = access === 'credential' ? '<your API key or JWT>' : walk?.token;
const clonePath = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const plainSnippets = clientSnippets({ mcpUrl, daguUrl: dagu.url, clonePath });
const bearerSnippets =
  bearer === undefined ? plainSnippets : clientSnippets({ mcpUrl, daguUrl: dagu.url, clonePath, bearer });
// OAuth hosts sign in themselves, so their entries carry no header; the Inspector's CLI has no terminal
// to sign in from, so its lines carry the walk's token.
const snippets = bearerSnippets
  .map((snippet, index) =>
    access === 'oauth' && snippet.host !== 'MCP Inspector' ? plainSnippets[index]! : snippet,
  )
  .map((snippet) => `${snippet.host}, in ${snippet.where}:\n${snippet.text}`)
  .join('\n\n');

const accessLine = {
  anonymous: 'Access:   no authentication (loopback only): the entries below carry no header.',
  credential:
    'Access:   callers need a credential (AUTH_* is set): put yours where the entries below say <your API key or JWT>.',
  oauth: `Access:   OAuth, the gateway being its own authorization server (AUTH_SERVER=builtin, docs/oauth-builtin.md).
          Callers need an access token for ${mcpUrl} (scope dagu.read) from ${publicUrl}.
          Claude Code, VS Code and Cursor get one themselves: their entries below carry no header; they
          register, show the gateway's consent page, then the provider's sign-in page:
          user ${demoUser.login}, password ${demoUser.password}.
          The Inspector has no terminal to sign in from here: its lines carry the token of step ${TOKEN_STEP} below.`,
}[access];
const webUiAuthentication = {
  anonymous: '',
  credential: ', Authentication: Bearer <your API key or JWT>',
  oauth: `, Authentication: Bearer <the token of step ${TOKEN_STEP}>`,
}[access];

print(`
Dagu:     ${dagu.url} (Dagu ${dagu.version}, REST under ${dagu.apiBase})
          ${seed.dagCount} sample DAGs and their runs (a failed run, a parent/child run${seed.v2 === undefined ? '' : ', a foreach run, a human task'}, an approval left waiting)${wikiPages > 0 ? `, ${wikiPages} Wiki pages in ${seed.v2?.wiki.workspaces.length ?? 0} workspaces and default` : ''}
Gateway:  http://${HOST}:${config.port}  (health /healthz, readiness /readyz, metrics /metrics)
MCP URL:  ${mcpUrl}
${upstream === undefined ? '' : `Sign-in:  ${upstream.issuer} (the OpenID provider users sign in at; no registration endpoint)\n`}${accessLine}
${walk === undefined ? '' : `\n${walk.text}\n`}
Connect a client (README "Connect a client"; the stdio entries start their own gateway, without authentication):

MCP Inspector web UI (browser, CORS: ${INSPECTOR_ORIGIN} is an allowed origin):
  ${INSPECTOR_WEB_NPX}, then open
  ${INSPECTOR_ORIGIN}: Transport Type "Streamable HTTP", URL ${mcpUrl}, Connection Type "Direct"${webUiAuthentication}

${snippets}

Try: {"target":"runs"}, {"target":"run","name":"${seed.dags.fails}","dagRunId":"latest"},
     {"target":"run","name":"${seed.dags.parent}","dagRunId":"latest"}, {"target":"wiki"},
     {"target":"wiki_search","search":"${seed.v2?.wiki.opsWord ?? 'deploy'}"}, {"uri":"dagu://reference/read-tool"},
     {"target":"workbook","path":"sample.xlsx"}
${
  config.toolText === 'json'
    ? 'TOOL_TEXT=json: the text of every result carries the JSON of its data.'
    : `A host whose model sees only "Dagu read completed." ignores structured results: start the demo as
${process.env.PORT === undefined ? '' : `PORT=${port} `}TOOL_TEXT=json npm run demo${oauth ? ' -- --oauth' : ''} (the text then carries the JSON of the data).`
}
Ctrl-C stops the gateway${upstream === undefined ? '' : ', the OpenID provider'} and Dagu. The gateway's log and audit lines follow.
`);
releaseGatewayOutput();

/** One MCP authorization flow, as a host runs it: what each step found, and the token it got. */
async function walkOAuthFlow(provider: AuthorizationServer): Promise<{ text: string; token: string }> {
  const challenge = (
    await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    })
  ).headers.get('www-authenticate');
  const readJson = async (url: string) => (await (await fetch(url)).json()) as Record<string, unknown>;
  const metadata = await readJson(`${publicUrl}/.well-known/oauth-protected-resource/mcp`);
  const gatewayServer = await readJson(`${publicUrl}/.well-known/oauth-authorization-server`);
  const providerServer = await readJson(`${provider.issuer}/.well-known/openid-configuration`);
  const agent = new BrowserAgent(demoUser, publicUrl);
  const client = new GatewayOAuthProvider({
    user: demoUser,
    agent,
    upstreamOrigin: provider.issuer,
    clientName: 'npm run demo',
    scope: 'dagu.read',
  });
  const connection = await connectWithOAuth(mcpUrl, client);
  const token = client.tokens()?.access_token ?? '';
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<
    string,
    unknown
  >;
  const result = (await connection.client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } })) as {
    structuredContent?: { data?: { items?: unknown[] } };
  };
  await connection.close();
  const text = `OAuth (--oauth): one authorization flow as an MCP host runs it, against the gateway's own server
  1. POST ${mcpUrl} without a token: WWW-Authenticate: ${challenge}
  2. the metadata names authorization_servers ${JSON.stringify(metadata.authorization_servers)}, scopes_supported ${JSON.stringify(metadata.scopes_supported)}
  3. ${publicUrl}/.well-known/oauth-authorization-server: registration_endpoint ${JSON.stringify(gatewayServer.registration_endpoint)}, client_id_metadata_document_supported ${JSON.stringify(gatewayServer.client_id_metadata_document_supported ?? false)};
     the provider's ${provider.issuer}/.well-known/openid-configuration: registration_endpoint ${JSON.stringify(providerServer.registration_endpoint ?? null)}
  4. dynamic registration at the gateway: client ${client.client?.client_id ?? '?'}; the gateway's consent page (${agent.consentPages} shown), then the sign-in at the provider as ${demoUser.login}; authorization code with PKCE S256
  5. token from the gateway: iss ${JSON.stringify(claims.iss)}, aud ${JSON.stringify(claims.aud)}, scope "${String(claims.scope)}", expires in ${Number(claims.exp) - Math.floor(Date.now() / 1000)} s (restart the demo for a new one):
     ${token}
  6. dagu_read {"target":"dags"} with it: ${result.structuredContent?.data?.items?.length ?? 0} DAGs`;
  return { text, token };
}
