// `npm run demo -- --oauth` as a newcomer runs it: its own Dagu, an authorization server, the gateway as
// that server's resource server, and one walk through the MCP authorization flow, printed step by step.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { ROOT } from '../../support/bin.ts';
import { freePort } from '../../support/dagu.ts';

test('npm run demo -- --oauth walks the authorization flow and reads through the gateway', async () => {
  const port = await freePort();
  const child = spawn('npm', ['run', 'demo', '--', '--oauth'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const walked = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/^Give http/m.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the demo exited (${code}) before the flow:\n${output}`)));
  });
  try {
    await walked;
    const mcpUrl = `http://127.0.0.1:${port}/mcp`;
    assert.match(
      output,
      new RegExp(
        `WWW-Authenticate: Bearer realm="dagu-mcp-gateway", resource_metadata="http://127\\.0\\.0\\.1:${port}/\\.well-known/oauth-protected-resource/mcp", scope="dagu\\.read"`,
      ),
    );
    assert.match(output, /scopes_supported \["dagu\.read","dagu\.workbook"\]/);
    assert.match(output, new RegExp(`token: aud "${mcpUrl.replaceAll('.', '\\.')}", scope "dagu\\.read"`));
    const dags = Number(/with it: (\d+) DAGs/.exec(output)?.[1]);
    assert.ok(dags > 0, output);
    // The snippets name no header: OAuth hosts find their credential themselves.
    assert.doesNotMatch(output, /Authorization: Bearer/);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      process.kill(-child.pid!, 'SIGINT');
      await exited;
    }
  }
});
