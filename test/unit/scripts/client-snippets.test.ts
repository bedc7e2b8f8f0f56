import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BIN_NAME,
  CLONE_ENTRY,
  clientSnippets,
  README_SNIPPET_OPTIONS,
  snippetsMarkdown,
} from '../../../scripts/client-snippets.ts';
import { loadConfig } from '../../../src/config.ts';
import { SETTINGS } from '../../../src/settings.ts';
import { ROOT } from '../../support/bin.ts';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = readme.slice(
  readme.indexOf('## Connect a client'),
  readme.indexOf('\n## ', readme.indexOf('## Connect a client') + 1),
);
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
};
const GATEWAY_FLAGS = new Set([...SETTINGS.map((setting) => setting.flag), '--stdio']);

test("the README's Connect a client section holds exactly the generated snippets", () => {
  assert.ok(
    section.includes(snippetsMarkdown(README_SNIPPET_OPTIONS)),
    'regenerate: node --import tsx scripts/client-snippets.ts',
  );
  for (const host of [
    'Claude Code',
    'VS Code',
    'Cursor',
    'Claude Desktop',
    'Claude Desktop from a clone',
    'MCP Inspector',
  ])
    assert.ok(section.includes(`${host}`), host);
});

test('every JSON snippet in the section parses and names the real command, flags and MCP path', () => {
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)\n```/g)].map((match) => match[1]!);
  assert.equal(blocks.length, 4);
  const { mcpPath } = loadConfig({});
  for (const block of blocks) {
    const config = JSON.parse(block) as Record<string, Record<string, Record<string, unknown>>>;
    const server = (config.servers ?? config.mcpServers)?.dagu;
    assert.ok(server, block);
    if (typeof server.url === 'string') assert.equal(new URL(server.url).pathname, mcpPath);
    if (server.command !== undefined) {
      const args = server.args as string[];
      if (server.command === 'node')
        assert.equal(args.shift(), `${README_SNIPPET_OPTIONS.clonePath}/${CLONE_ENTRY}`);
      else assert.equal(server.command, BIN_NAME);
      for (const arg of args)
        if (arg.startsWith('--')) assert.ok(GATEWAY_FLAGS.has(arg), `${arg} is a gateway flag`);
    }
  }
  assert.ok(PACKAGE.bin[BIN_NAME], 'the command is the package bin');
  assert.equal(PACKAGE.bin[BIN_NAME], CLONE_ENTRY, 'the clone entry runs what the command runs');
});

test('the shell snippets give the URL and the bearer header; without a credential there is no header', () => {
  const withKey = clientSnippets(README_SNIPPET_OPTIONS);
  const claude = withKey.find((snippet) => snippet.host === 'Claude Code')!;
  assert.equal(
    claude.text,
    `claude mcp add --transport http dagu ${README_SNIPPET_OPTIONS.mcpUrl} --header "Authorization: Bearer ${README_SNIPPET_OPTIONS.bearer}"`,
  );
  const anonymous = clientSnippets({
    mcpUrl: 'http://127.0.0.1:9999/mcp',
    daguUrl: 'http://127.0.0.1:8080',
    clonePath: '/clone',
  });
  for (const snippet of anonymous) {
    assert.doesNotMatch(snippet.text, /Authorization|Bearer/, snippet.host);
    if (!snippet.host.startsWith('Claude Desktop'))
      assert.ok(snippet.text.includes('http://127.0.0.1:9999/mcp'), snippet.host);
  }
});
