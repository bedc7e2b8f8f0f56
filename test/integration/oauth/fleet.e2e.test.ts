// The built-in authorization server's state outlives its processes (issue 29, "Done when": two replicas
// behind the fleet test's HAProxy; sign in through one, refresh and read through the other; restart
// both, refresh again). Every gateway here is the package's bin started as its own process, as users
// run it, and a restart is that process stopped and started again on the same state:
// - one instance on its embedded store (LevelDB in OAUTH_STATE_DIR): after a restart the client's
//   refresh token still refreshes, the access token issued before still verifies (the same signing
//   keys), and a new authorization by the same user and client shows no consent page again;
// - two replicas sharing a real Redis (OAUTH_STATE_REDIS_URL) behind a real HAProxy running
//   deploy/haproxy/haproxy.cfg, PUBLIC_URL being HAProxy's front: the sign-in through replica A, the
//   refresh and read through replica B, then both restarted and the refresh and read again; a sign-in
//   whose browser steps alternate between the replicas; one refresh token sent to both at once.
// The client is the v2 TypeScript SDK's (dynamic registration); its browser the test's BrowserAgent
// signing in at oidc-provider as the upstream (test/support/builtin-as.ts). Each replica writes its
// own audit log: which replica answered is read there.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  exchangeAuthorization,
  refreshAuthorization,
  startAuthorization,
} from '@modelcontextprotocol/client';
import { bearer, postMcp, rawHttp, toolCallBody } from '../../support/auth-fixtures.ts';
import { type BinProcess, baseEnv, ensureBuilt, freePort, startBin } from '../../support/bin.ts';
import {
  BrowserAgent,
  decodeJwt,
  type GatewayOAuthProvider,
  type GatewayUpstream,
  newGatewayProvider,
  serverMetadata,
  startGatewayUpstream,
} from '../../support/builtin-as.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { deployTool } from '../../support/deploy-tools.ts';
import { type RunningHaproxy, startHaproxy, waitFor } from '../../support/haproxy.ts';
import { connectWithOAuth, type OAuthConnection, readDags } from '../../support/oauth-clients.ts';
import { type RedisServer, startRedis } from '../../support/redis.ts';

type AuditLine = Record<string, unknown>;

/** A gateway process with its own audit log file, kept across its restarts (appended to). */
class Gateway {
  process: BinProcess | undefined;
  readonly auditFile: string;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: () => Record<string, string>,
  ) {
    this.auditFile = join(home, `${name}.audit.log`);
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = await startBin({
      env: baseEnv({ PORT: String(this.port), AUDIT_LOG: this.auditFile, ...this.env() }),
    });
  }

  /** SIGINT, and the exit awaited: the process is gone, its store closed or its lock released. */
  async stop(): Promise<void> {
    await this.process?.stop();
  }

  auditLines(): AuditLine[] {
    let text = '';
    try {
      text = readFileSync(this.auditFile, 'utf8');
    } catch {}
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AuditLine);
  }
}

let home = '';
let dagu: TestDagu;
let upstream: GatewayUpstream;
let single: Gateway;
let singleUrl = '';
let haproxy: RunningHaproxy | undefined;
let redis: RedisServer | undefined;
let replicas: Gateway[] = [];
const open: OAuthConnection[] = [];
const haproxyTool = deployTool('haproxy');
const skipFleet = skipUnlessCI(haproxyTool.reason);

before(async () => {
  ensureBuilt();
  home = mkdtempSync(join(tmpdir(), 'oauth-fleet-'));
  dagu = await getTestDagu();
  const daguEnv = { DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase };
  const singlePort = await freePort();
  singleUrl = `http://127.0.0.1:${singlePort}`;
  const publicUrls = [singleUrl];
  if (!skipFleet) {
    redis = await startRedis();
    const [portA, portB, unused] = [await freePort(), await freePort(), await freePort()];
    // The configuration names three servers; the third is an address nothing listens on (always DOWN).
    haproxy = await startHaproxy(haproxyTool.path!, home, [
      `127.0.0.1:${portA}`,
      `127.0.0.1:${portB}`,
      `127.0.0.1:${unused}`,
    ]);
    publicUrls.push(haproxy.frontUrl);
    const replicaEnv = () => ({
      ...daguEnv,
      ...upstream.gatewayEnv(haproxy!.frontUrl),
      OAUTH_STATE_REDIS_URL: redis!.url,
    });
    replicas = [new Gateway('replica-a', portA, replicaEnv), new Gateway('replica-b', portB, replicaEnv)];
  }
  upstream = await startGatewayUpstream(publicUrls);
  single = new Gateway('single', singlePort, () => ({
    ...daguEnv,
    ...upstream.gatewayEnv(singleUrl),
    OAUTH_STATE_DIR: join(home, 'single-state'),
  }));
});

after(async () => {
  for (const connection of open) await connection.close().catch(() => {});
  await single?.stop();
  await Promise.all(replicas.map((replica) => replica.stop()));
  await haproxy?.stop();
  await redis?.stop();
  await upstream?.server.stop();
  await dagu?.stop();
  if (home !== '') rmSync(home, { recursive: true, force: true });
});

/** The v2 SDK client connected through `publicUrl` after its sign-in with a browser of its own. */
async function signIn(publicUrl: string) {
  const agent = new BrowserAgent(upstream.user, publicUrl);
  const provider = newGatewayProvider(agent, upstream.user, upstream.server.issuer);
  const connection = await connectWithOAuth(`${publicUrl}/mcp`, provider);
  open.push(connection);
  return { agent, provider, connection };
}

/** The SDK's refresh grant at `publicUrl`; the provider keeps the new tokens (the client reads with them). */
async function refresh(publicUrl: string, provider: GatewayOAuthProvider) {
  const before = provider.tokens()!;
  const refreshed = await refreshAuthorization(publicUrl, {
    metadata: await serverMetadata(publicUrl),
    clientInformation: provider.client!,
    refreshToken: before.refresh_token!,
    resource: new URL(`${publicUrl}/mcp`),
  });
  assert.notEqual(refreshed.access_token, before.access_token);
  assert.notEqual(refreshed.refresh_token, before.refresh_token, 'the refresh token rotates');
  provider.saveTokens(refreshed);
  return refreshed;
}

/** A `dags` read with a bearer token, by plain HTTP: the status and whether the tool answered. */
async function readWith(mcpUrl: string, accessToken: string) {
  const answer = await postMcp(mcpUrl, bearer(accessToken), toolCallBody({ target: 'dags' }));
  const result = answer.status === 200 ? (answer.json().result as { isError?: boolean }) : undefined;
  return { status: answer.status, toolError: result?.isError === true };
}

/**
 * A request sent straight to `replica` as HAProxy forwards it: with the `Host` the caller used
 * (PUBLIC_URL's), which `fetch` cannot set.
 */
async function sendAsHaproxy(replica: Gateway, url: URL, init: RequestInit): Promise<Response> {
  const answer = await rawHttp(`http://${replica.address}${url.pathname}${url.search}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.headers as Record<string, string>), host: url.host },
    ...(typeof init.body === 'string' ? { body: init.body } : {}),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    for (const one of [value ?? []].flat()) headers.append(name, one);
  }
  return new Response(answer.status === 204 ? null : answer.text, { status: answer.status, headers });
}

const refreshesOf = (lines: AuditLine[], clientId: string) =>
  lines.filter(
    (line) => line.event === 'oauth.token' && line.reason === 'refresh_token' && line.client_id === clientId,
  );
const readsOf = (lines: AuditLine[]) =>
  lines.filter((line) => line.event === 'mcp.tool_call' && line.identity === 'alice');

describe('one instance on its embedded store (OAUTH_STATE_DIR), restarted', () => {
  test('after the restart: the refresh token refreshes and the new token reads, the old access token still reads, and a new authorization shows no consent page', async () => {
    await single.start();
    const { agent, provider, connection } = await signIn(singleUrl);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    assert.equal(agent.consentPages, 1);
    const issued = provider.tokens()!;
    const firstPid = single.process!.child.pid;

    await single.stop();
    const linesBefore = single.auditLines().length;
    await single.start();
    assert.notEqual(single.process!.child.pid, firstPid, 'a new process');

    // The access token issued before the restart: signed with a key the restarted process still holds.
    assert.deepEqual(await readWith(`${singleUrl}/mcp`, issued.access_token), {
      status: 200,
      toolError: false,
    });
    await refresh(singleUrl, provider);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    const sinceRestart = single.auditLines().slice(linesBefore);
    assert.equal(refreshesOf(sinceRestart, provider.client!.client_id).length, 1);
    assert.equal(readsOf(sinceRestart).length, 2, 'the old token’s read and the refreshed one’s');

    // A new authorization by the same client in the same browser: its session cookie and the consent
    // were kept, so neither the consent page nor the upstream sign-in is shown.
    const metadata = await serverMetadata(singleUrl);
    const { authorizationUrl, codeVerifier } = await startAuthorization(singleUrl, {
      metadata,
      clientInformation: provider.client!,
      redirectUrl: provider.redirectUrl,
      scope: 'dagu.read',
      resource: new URL(`${singleUrl}/mcp`),
    });
    const stepsBefore = agent.steps.length;
    const callback = await agent.authorize(authorizationUrl, upstream.server.issuer);
    assert.equal(agent.consentPages, 1, 'no second consent page');
    const newSteps = agent.steps.slice(stepsBefore);
    assert.equal(
      newSteps.some((step) => step.url.startsWith(upstream.server.issuer)),
      false,
      JSON.stringify(newSteps),
    );
    const tokens = await exchangeAuthorization(singleUrl, {
      metadata,
      clientInformation: provider.client!,
      authorizationCode: callback.get('code')!,
      iss: callback.get('iss') ?? undefined,
      codeVerifier,
      redirectUri: provider.redirectUrl,
      resource: new URL(`${singleUrl}/mcp`),
    });
    assert.equal(decodeJwt(tokens.access_token).sub, 'alice');
    assert.deepEqual(await readWith(`${singleUrl}/mcp`, tokens.access_token), {
      status: 200,
      toolError: false,
    });
  });
});

describe('two replicas sharing Redis behind HAProxy (PUBLIC_URL: its front)', () => {
  const states = () => haproxy!.serverStates('ready');
  const upIs = (expected: { gateway1: string; gateway2: string }) =>
    waitFor(`HAProxy sees ${JSON.stringify(expected)}`, async () => {
      const now = await states();
      return now.gateway1 === expected.gateway1 && now.gateway2 === expected.gateway2;
    });

  test('signed in through replica A, refreshed and read through replica B; both restarted, refreshed and read again', {
    skip: skipFleet,
  }, async () => {
    const [a, b] = replicas as [Gateway, Gateway];
    const front = haproxy!.frontUrl;
    // The sign-in is pinned to A by running A alone: every step of it (discovery, registration,
    // authorize, consent, upstream callback, token) passes HAProxy to the one replica that is up.
    await a.start();
    await upIs({ gateway1: 'UP', gateway2: 'DOWN' });
    const { provider, connection } = await signIn(front);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    const clientId = provider.client!.client_id;
    assert.equal(decodeJwt(provider.tokens()!.access_token).aud, `${front}/mcp`);
    const aSignIn = a.auditLines();
    assert.ok(aSignIn.some((line) => line.event === 'oauth.registration' && line.client_id === clientId));
    assert.ok(aSignIn.some((line) => line.event === 'oauth.grant' && line.client_id === clientId));
    assert.equal(readsOf(aSignIn).length, 1);
    assert.deepEqual(b.auditLines(), [], 'B has not run yet');

    // B up, A stopped: HAProxy has only B to send the refresh and the read to.
    await b.start();
    await a.stop();
    await upIs({ gateway1: 'DOWN', gateway2: 'UP' });
    await refresh(front, provider);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    const bLines = b.auditLines();
    assert.equal(refreshesOf(bLines, clientId).length, 1, 'B answered the refresh');
    assert.equal(readsOf(bLines).length, 1, 'B answered the read');
    assert.equal(a.auditLines().length, aSignIn.length, 'A answered nothing more');

    // Both restarted: new processes, the state only in Redis.
    const pids = [a.process!.child.pid, b.process!.child.pid];
    await b.stop();
    const [aBefore, bBefore] = [a.auditLines().length, b.auditLines().length];
    await Promise.all([a.start(), b.start()]);
    assert.notEqual(a.process!.child.pid, pids[0]);
    assert.notEqual(b.process!.child.pid, pids[1]);
    await upIs({ gateway1: 'UP', gateway2: 'UP' });
    await refresh(front, provider);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    const afterRestart = [...a.auditLines().slice(aBefore), ...b.auditLines().slice(bBefore)];
    assert.equal(refreshesOf(afterRestart, clientId).length, 1, 'one of the restarted replicas refreshed');
    assert.equal(readsOf(afterRestart).length, 1, 'one of the restarted replicas read');
    const answered = (lines: AuditLine[]) =>
      `${refreshesOf(lines, clientId).length} refresh, ${readsOf(lines).length} read`;
    process.stdout.write(
      `# after both restarts: A ${answered(a.auditLines().slice(aBefore))}; B ${answered(b.auditLines().slice(bBefore))}\n`,
    );
  });

  test('a sign-in whose browser steps alternate between the replicas completes, and reads', {
    skip: skipFleet,
  }, async () => {
    const [a, b] = replicas as [Gateway, Gateway];
    await upIs({ gateway1: 'UP', gateway2: 'UP' });
    const [aBefore, bBefore] = [a.auditLines().length, b.auditLines().length];
    // The browser's requests to PUBLIC_URL go straight to A, B, A, … in turn: authorize (A), the consent
    // page (B), its form posted (A), the upstream's callback (B), the sign-in finished (A), the
    // authorization resumed (B). Each replica finds what the other stored (interaction, CSRF key,
    // pending sign-in, session) in Redis. The SDK's own requests pass HAProxy.
    const agent = new BrowserAgent(upstream.user, haproxy!.frontUrl);
    const answeredBy: string[] = [];
    agent.sendToGateway = (url, init) => {
      const replica = replicas[answeredBy.length % 2]!;
      answeredBy.push(replica.name);
      return sendAsHaproxy(replica, url, init);
    };
    const provider = newGatewayProvider(agent, upstream.user, upstream.server.issuer);
    const connection = await connectWithOAuth(`${haproxy!.frontUrl}/mcp`, provider);
    open.push(connection);
    assert.ok((await readDags(connection.client)).includes(dagu.seed.dags.twoSteps));
    assert.equal(agent.consentPages, 1);
    assert.deepEqual(answeredBy, [
      'replica-a',
      'replica-b',
      'replica-a',
      'replica-b',
      'replica-a',
      'replica-b',
    ]);
    const clientId = provider.client!.client_id;
    const events = (lines: AuditLine[]) =>
      lines.filter((line) => line.client_id === clientId).map((line) => line.event);
    // The consent form shown by B and posted to A; the callback B received, finished by A.
    assert.deepEqual(
      events(a.auditLines().slice(aBefore)).filter(
        (event) => event !== 'oauth.registration' && event !== 'oauth.token',
      ),
      ['oauth.consent', 'oauth.grant'],
    );
    assert.deepEqual(
      events(b.auditLines().slice(bBefore)).filter(
        (event) => event === 'oauth.consent' || event === 'oauth.grant',
      ),
      [],
    );
  });

  test('one refresh token sent to both replicas at once: one refresh is answered, the other refused invalid_grant', {
    skip: skipFleet,
  }, async () => {
    const [a, b] = replicas as [Gateway, Gateway];
    await upIs({ gateway1: 'UP', gateway2: 'UP' });
    const { provider } = await signIn(haproxy!.frontUrl);
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: provider.tokens()!.refresh_token!,
      client_id: provider.client!.client_id,
    }).toString();
    // Straight at each replica (the token endpoint answers on any host): both at the same moment.
    const answers = await Promise.all(
      [a, b].map(async (replica) => {
        const response = await fetch(`http://${replica.address}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
        });
        return { status: response.status, body: (await response.json()) as { error?: string } };
      }),
    );
    const outcomes = answers
      .map((answer) => (answer.status === 200 ? 'ok' : String(answer.body.error)))
      .sort();
    assert.deepEqual(outcomes, ['invalid_grant', 'ok'], JSON.stringify(answers));
  });
});
