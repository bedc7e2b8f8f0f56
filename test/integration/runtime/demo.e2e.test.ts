// `npm run demo` as a newcomer runs it: its own Dagu, the gateway, and (with `--oauth`) the gateway's
// built-in authorization server signing in at a local OpenID provider without a registration endpoint,
// one walk through the MCP authorization flow printed step by step, and a client signing in as printed.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { INSPECTOR_NPX } from '../../../scripts/client-snippets.ts';
import { testTools } from '../../../scripts/test-tools.mjs';
import { ROOT } from '../../support/bin.ts';
import { BrowserAgent, GatewayOAuthProvider } from '../../support/builtin-as.ts';
import { freePort } from '../../support/dagu.ts';
import { withClient } from '../../support/gateway.ts';
import { connectWithOAuth, readDags } from '../../support/oauth-clients.ts';
import { runToEnd } from '../../support/run.ts';

interface RunningDemo {
  port: number;
  /** Everything the demo printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Everything it printed on stdout so far. */
  stdout(): string;
  /** Resolves once `pattern` matches the output; rejects if the demo exits first. */
  printed(pattern: RegExp): Promise<void>;
  stop(): Promise<void>;
  /** Resolves with the exit code once the demo has exited. */
  exited: Promise<number | null>;
}

/** `npm run demo -- …args` on a free port, with the environment a newcomer's shell would give it. */
async function startDemo(
  args: string[],
  env: Record<string, string> = {},
  port?: number,
): Promise<RunningDemo> {
  port ??= await freePort();
  const child: ChildProcess = spawn('npm', ['run', 'demo', ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  let stdout = '';
  const waiters: Array<{ pattern: RegExp; resolve(): void; reject(error: Error): void }> = [];
  const settle = () => {
    for (const waiter of waiters.splice(0)) {
      if (waiter.pattern.test(output)) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
    settle();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    settle();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  child.once('exit', (code) => {
    for (const waiter of waiters.splice(0)) {
      waiter.reject(new Error(`the demo exited (${code}) before printing ${waiter.pattern}:\n${output}`));
    }
  });
  return {
    port,
    exited,
    output: () => output,
    stdout: () => stdout,
    printed: (pattern) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ pattern, resolve, reject });
        settle();
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      process.kill(-child.pid!, 'SIGINT');
      await exited;
    },
  };
}

describe('npm run demo -- --oauth: the built-in authorization server, signing in at a provider without registration', () => {
  let demo: RunningDemo;
  let output: string;
  let mcpUrl: string;
  before(async () => {
    demo = await startDemo(['--oauth']);
    await demo.printed(/The gateway's log and audit lines follow\.\n/);
    output = demo.stdout();
    mcpUrl = `http://127.0.0.1:${demo.port}/mcp`;
  });
  after(() => demo?.stop());

  test('the walk: the gateway names itself as authorization server, registers the client, a token for its MCP URL reads; one story, entries without a header, Inspector lines with its token', async () => {
    const gateway = `http://127\\.0\\.0\\.1:${demo.port}`;
    assert.match(
      output,
      new RegExp(
        `WWW-Authenticate: Bearer realm="dagu-mcp-gateway", resource_metadata="${gateway}/\\.well-known/oauth-protected-resource/mcp", scope="dagu\\.read"`,
      ),
    );
    assert.match(
      output,
      new RegExp(
        `authorization_servers \\["${gateway}"\\], scopes_supported \\["dagu\\.read","dagu\\.workbook"\\]`,
      ),
    );
    assert.match(output, new RegExp(`registration_endpoint "${gateway}/oauth/register"`));
    assert.match(output, /the gateway's consent page \(1 shown\), then the sign-in at the provider as demo/);
    assert.match(output, new RegExp(`iss "${gateway}", aud "${gateway}/mcp", scope "dagu\\.read"`));
    const dags = Number(/with it: (\d+) DAGs/.exec(output)?.[1]);
    assert.ok(dags > 0, output);
    const token = /^ {5}(ey[\w-]+\.[\w-]+\.[\w-]+)$/m.exec(output)?.[1];
    assert.ok(token, 'step 5 prints the token');
    // One story: OAuth, not "a credential (AUTH_* is set)" nor a placeholder to fill in.
    assert.match(output, /^Access: {3}OAuth, the gateway being its own authorization server/m);
    assert.doesNotMatch(output, /AUTH_\* is set|<your API key or JWT>/);
    // Hosts that sign in carry no header; the Inspector's CLI line over HTTP carries the token of step 5, its web UI line says to paste it.
    const bearers = [...output.matchAll(/Authorization: Bearer ([^"\s]+)/g)].map((match) => match[1]);
    assert.deepEqual(bearers, [token]);
    assert.match(output, /Authentication: Bearer <the token of step 5>/);
    // The walk's audit lines wait until the banner is printed.
    const banner = output.slice(0, output.indexOf("The gateway's log and audit lines follow."));
    assert.doesNotMatch(banner, /"event":|"level":/);
    // The Inspector CLI line, as printed (without its npx prefix: the pinned Inspector on Node 22), reads.
    const line = output.split('\n').find((entry) => entry.startsWith(`${INSPECTOR_NPX} --cli http`));
    assert.ok(line, 'the Inspector CLI line over HTTP');
    const tools = testTools() as { node22: string; inspector: string };
    const args = [...line.slice(INSPECTOR_NPX.length).matchAll(/"([^"]*)"|(\S+)/g)].map(
      (match) => match[1] ?? match[2]!,
    );
    const ran = await runToEnd(tools.node22, [tools.inspector, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
    });
    assert.equal(ran.code, 0, ran.stderr.slice(-1500));
    assert.deepEqual(
      (JSON.parse(ran.stdout) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name),
      ['dagu_read'],
    );
  });

  test('with the printed URLs and user: the gateway serves its RFC 8414 metadata, the provider has no registration endpoint, and the TypeScript SDK client signs in through the gateway and reads', async () => {
    const printedMcp = /^MCP URL: {2}(\S+)$/m.exec(output)?.[1];
    const signIn = /^Sign-in: {2}(\S+) /m.exec(output)?.[1] ?? '';
    const password = /user demo, password (\S+)\.$/m.exec(output)?.[1];
    assert.equal(printedMcp, mcpUrl);
    assert.match(signIn, /^http:\/\/127\.0\.0\.1:\d+$/, output);
    assert.ok(password, "the banner prints the demo user's password");
    const gatewayOrigin = new URL(mcpUrl).origin;
    const served = await fetch(`${gatewayOrigin}/.well-known/oauth-authorization-server`);
    assert.equal(served.status, 200);
    const metadata = (await served.json()) as Record<string, unknown>;
    assert.equal(metadata.issuer, gatewayOrigin);
    assert.equal(metadata.registration_endpoint, `${gatewayOrigin}/oauth/register`);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    const upstream = (await (await fetch(`${signIn}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(upstream.issuer, signIn);
    assert.equal(upstream.registration_endpoint, undefined);

    const user = { login: 'demo', password };
    const agent = new BrowserAgent(user, gatewayOrigin);
    const provider = new GatewayOAuthProvider({
      user,
      agent,
      upstreamOrigin: signIn,
      scope: 'dagu.read',
      clientName: 'demo test (TypeScript SDK)',
    });
    const connection = await connectWithOAuth(mcpUrl, provider);
    try {
      assert.ok((await readDags(connection.client)).length > 0);
      assert.equal(agent.consentPages, 1);
      // The user agent went to the provider the banner names.
      assert.ok(
        agent.steps.some((step) => step.url.startsWith(`${signIn}/`)),
        JSON.stringify(agent.steps),
      );
      const claims = JSON.parse(
        Buffer.from(provider.tokens()!.access_token.split('.')[1] ?? '', 'base64url').toString(),
      ) as Record<string, unknown>;
      assert.equal(claims.aud, mcpUrl);
      assert.equal(claims.sub, 'demo');
    } finally {
      await connection.close();
    }
  });
});

test('a second npm run demo on a busy port says which port and which setting moves it, in one line, no stack', async () => {
  const busy = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
  try {
    const demo = await startDemo(['--oauth'], {}, port);
    assert.equal(await demo.exited, 1);
    const lines = demo
      .output()
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('>'));
    assert.deepEqual(lines, [
      `demo: port ${port} on 127.0.0.1 is already in use (another demo or gateway?); start this one on another port: PORT=${port + 1} npm run demo -- --oauth`,
    ]);
  } finally {
    busy.close();
  }
});

test('npm run demo: once its banner is printed, every line the gateway writes is JSON, the SDK notice included', async () => {
  // debug, so that the SDK's notice about JSON answers (a debug line) is written at all.
  const demo = await startDemo([], { LOG_LEVEL: 'debug' });
  try {
    await demo.printed(/The gateway's log and audit lines follow\.\n/);
    // The gateway's lines written before the banner (the SDK notice among them) follow it at once.
    const BANNER_END = "The gateway's log and audit lines follow.\n";
    const bannerEnd = demo.stdout().indexOf(BANNER_END) + BANNER_END.length;
    // The banner is in one piece: the anonymous-access warning, a JSON line, waits until it is out.
    await demo.printed(/NO AUTHENTICATION/);
    assert.doesNotMatch(demo.stdout().slice(0, bannerEnd), /"level":/);
    assert.ok(demo.stdout().indexOf('NO AUTHENTICATION') > bannerEnd);
    // Without --oauth nothing of the authorization server is loaded (oidc-provider warns on Node 20).
    assert.doesNotMatch(demo.output(), /WARNING|oidc-provider/);
    const mcpUrl = `http://127.0.0.1:${demo.port}/mcp`;
    // Both eras, so the SDK answers both legs (the modern one prints the notice).
    for (const era of ['modern', 'legacy'] as const) {
      await withClient(era, mcpUrl, {}, async (client) => {
        const result = await client.callTool({ target: 'dags' });
        assert.notEqual(result.isError, true, JSON.stringify(result));
      });
    }
    // The demo audits to stdout: two tool calls, two audit lines.
    await demo.printed(/"event":"mcp\.tool_call"[^\n]*\n[\s\S]*"event":"mcp\.tool_call"/);
    const lines = demo
      .stdout()
      .slice(bannerEnd)
      .split('\n')
      .filter((line) => line !== '');
    const records = lines.map((line): Record<string, unknown> => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return assert.fail(`a line the gateway wrote is not JSON: ${line}`);
      }
    });
    assert.equal(records.filter((record) => record.event === 'mcp.tool_call').length, 2);
    const notice = records.find(
      (record) => record.source === 'console' && String(record.msg).startsWith("responseMode: 'json'"),
    );
    assert.ok(notice, `the SDK's notice was not logged as a JSON line:\n${lines.join('\n')}`);
  } finally {
    await demo.stop();
  }
});
