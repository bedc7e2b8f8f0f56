// Client configurations for the README's "Connect a client" section and for `npm run demo`, written
// once here: the demo prints them with its real URL, the README holds them for the default URL, and a
// test checks that the README's copy is exactly this output and that every flag is one the gateway has.
//
//   node --import tsx scripts/client-snippets.ts   prints the README section's snippets
import { readFileSync } from 'node:fs';
import { SETTINGS, type SettingName } from '../src/settings.ts';

export interface SnippetOptions {
  /** The gateway's MCP URL, e.g. http://127.0.0.1:8090/mcp. */
  mcpUrl: string;
  /** The bearer credential to show (a key, or a placeholder); none when the gateway runs without auth. */
  bearer?: string;
  /** The Dagu the stdio snippets (which start their own gateway) read. */
  daguUrl: string;
  /** The clone the "from a clone" stdio snippet runs (`npm ci` builds its dist/). */
  clonePath: string;
}

export interface ClientSnippet {
  host: string;
  /** Where the snippet goes. */
  where: string;
  language: 'sh' | 'json';
  text: string;
}

/** The command the package installs (`bin` in package.json). */
export const BIN_NAME = 'dagu-mcp-gateway';
/** What that command runs, inside a clone (never `npm start`: npm's banner would corrupt stdout). */
export const CLONE_ENTRY = 'dist/main.js';

const TEST_TOOLS = JSON.parse(
  readFileSync(new URL('./test-tools/package.json', import.meta.url), 'utf8'),
) as { dependencies: Record<string, string> };

/**
 * How the snippets run MCP Inspector: the version the tests pin, on the Node major the tests run it
 * on. Inspector 2.x needs Node 22.19 or newer, and no Inspector that runs on Node 20 has `--header`:
 * `-p node@22` puts an npm-packaged Node 22 first on the PATH of the command npx runs, whatever Node
 * runs npx (Node 20.18.1 and up, as the gateway). `--loglevel=error`: on Node 20 npm would warn that
 * the Inspector's engines want a newer Node than the one running npm, which is not the one running it.
 */
export const INSPECTOR = {
  version: TEST_TOOLS.dependencies['@modelcontextprotocol/inspector']!,
  nodeMajor: /@(\d+)\./.exec(TEST_TOOLS.dependencies.node22!)![1]!,
  bin: 'mcp-inspector',
};
export const INSPECTOR_NPX = `npx -y --loglevel=error -p node@${INSPECTOR.nodeMajor} -p @modelcontextprotocol/inspector@${INSPECTOR.version} ${INSPECTOR.bin}`;

/**
 * MCP Inspector's v1 web UI, which can connect from the browser itself ("Direct"; the 2.x web UI always
 * goes through its own backend): the release the browser test drives, on Node 22 like the CLI.
 */
export const INSPECTOR_WEB_VERSION = /@([\d.]+)$/.exec(TEST_TOOLS.dependencies['inspector-web-v1']!)![1]!;
export const INSPECTOR_WEB_NPX = `npx -y --loglevel=error -p node@${INSPECTOR.nodeMajor} -p @modelcontextprotocol/inspector@${INSPECTOR_WEB_VERSION} mcp-inspector`;

/** A gateway flag, looked up in the settings table: a renamed setting breaks here, not in a user's config. */
function flag(name: SettingName): string {
  const setting = SETTINGS.find((candidate) => candidate.name === name);
  if (setting === undefined) throw new Error(`no setting ${name}`);
  return setting.flag;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

export function clientSnippets(options: SnippetOptions): ClientSnippet[] {
  const { mcpUrl, bearer } = options;
  const header = bearer === undefined ? undefined : `Authorization: Bearer ${bearer}`;
  const headers = bearer === undefined ? {} : { headers: { Authorization: `Bearer ${bearer}` } };
  const stdioArgs = ['--stdio', flag('DAGU_URL'), options.daguUrl];
  const quoted = (text: string) => `"${text}"`;
  return [
    {
      host: 'Claude Code',
      where: 'a shell',
      language: 'sh',
      text: [
        'claude mcp add --transport http dagu',
        mcpUrl,
        ...(header ? ['--header', quoted(header)] : []),
      ].join(' '),
    },
    {
      host: 'VS Code',
      where: '.vscode/mcp.json',
      language: 'json',
      text: json({ servers: { dagu: { type: 'http', url: mcpUrl, ...headers } } }),
    },
    {
      host: 'Cursor',
      where: '.cursor/mcp.json (or ~/.cursor/mcp.json)',
      language: 'json',
      text: json({ mcpServers: { dagu: { url: mcpUrl, ...headers } } }),
    },
    {
      host: 'Claude Desktop (stdio: it starts the gateway itself)',
      where: 'claude_desktop_config.json',
      language: 'json',
      text: json({ mcpServers: { dagu: { command: BIN_NAME, args: stdioArgs } } }),
    },
    {
      host: 'Claude Desktop from a clone (no install: `npm ci` there builds dist/)',
      where: 'claude_desktop_config.json',
      language: 'json',
      text: json({
        mcpServers: {
          dagu: { command: 'node', args: [`${options.clonePath}/${CLONE_ENTRY}`, ...stdioArgs] },
        },
      }),
    },
    {
      host: 'MCP Inspector',
      where: `a shell (CLI mode; Inspector ${INSPECTOR.version} on the Node ${INSPECTOR.nodeMajor} that \`-p node@${INSPECTOR.nodeMajor}\` brings, whatever Node runs npx), over HTTP, then over stdio with the file above`,
      language: 'sh',
      text: [
        `${INSPECTOR_NPX} --cli ${mcpUrl} --transport http${header ? ` --header ${quoted(header)}` : ''} --method tools/list`,
        `${INSPECTOR_NPX} --cli --config claude_desktop_config.json --server dagu --method tools/list`,
      ].join('\n'),
    },
  ];
}

/** The snippets as Markdown: a line naming host and place, then a fenced block. */
export function snippetsMarkdown(options: SnippetOptions): string {
  return clientSnippets(options)
    .map(
      (snippet) =>
        `${snippet.host}, in ${snippet.where}:\n\n\`\`\`${snippet.language}\n${snippet.text}\n\`\`\``,
    )
    .join('\n\n');
}

/** The values the README shows. */
export const README_SNIPPET_OPTIONS: SnippetOptions = {
  mcpUrl: 'http://127.0.0.1:8090/mcp',
  bearer: 'dmg_your_key',
  daguUrl: 'http://127.0.0.1:8080',
  clonePath: '/path/to/dagu-mcp-gateway',
};

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${snippetsMarkdown(README_SNIPPET_OPTIONS)}\n`);
}
