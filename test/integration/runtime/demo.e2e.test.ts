// `npm run demo` as a newcomer runs it: its own Dagu, the gateway, and (with `--oauth`) an
// authorization server and one walk through the MCP authorization flow, printed step by step.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { ROOT } from '../../support/bin.ts';
import { freePort } from '../../support/dagu.ts';
import { withClient } from '../../support/gateway.ts';

interface RunningDemo {
  port: number;
  /** Everything the demo printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Everything it printed on stdout so far. */
  stdout(): string;
  /** Resolves once `pattern` matches the output; rejects if the demo exits first. */
  printed(pattern: RegExp): Promise<void>;
  stop(): Promise<void>;
}

/** `npm run demo -- …args` on a free port, with the environment a newcomer's shell would give it. */
async function startDemo(args: string[], env: Record<string, string> = {}): Promise<RunningDemo> {
  const port = await freePort();
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
  child.once('exit', (code) => {
    for (const waiter of waiters.splice(0)) {
      waiter.reject(new Error(`the demo exited (${code}) before printing ${waiter.pattern}:\n${output}`));
    }
  });
  return {
    port,
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

test('npm run demo -- --oauth walks the authorization flow and reads through the gateway', async () => {
  const demo = await startDemo(['--oauth']);
  try {
    await demo.printed(/^Give http/m);
    const output = demo.output();
    const mcpUrl = `http://127.0.0.1:${demo.port}/mcp`;
    assert.match(
      output,
      new RegExp(
        `WWW-Authenticate: Bearer realm="dagu-mcp-gateway", resource_metadata="http://127\\.0\\.0\\.1:${demo.port}/\\.well-known/oauth-protected-resource/mcp", scope="dagu\\.read"`,
      ),
    );
    assert.match(output, /scopes_supported \["dagu\.read","dagu\.workbook"\]/);
    assert.match(output, new RegExp(`token: aud "${mcpUrl.replaceAll('.', '\\.')}", scope "dagu\\.read"`));
    const dags = Number(/with it: (\d+) DAGs/.exec(output)?.[1]);
    assert.ok(dags > 0, output);
    // The snippets name no header: OAuth hosts find their credential themselves.
    assert.doesNotMatch(output, /Authorization: Bearer/);
  } finally {
    await demo.stop();
  }
});

test('npm run demo: once its banner is printed, every line the gateway writes is JSON, the SDK notice included', async () => {
  // debug, so that the SDK's notice about JSON answers (a debug line) is written at all.
  const demo = await startDemo([], { LOG_LEVEL: 'debug' });
  try {
    await demo.printed(/Ctrl-C stops the gateway and Dagu\.\n/);
    const bannerEnd = demo.stdout().length;
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
