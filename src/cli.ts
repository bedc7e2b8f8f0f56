import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SETTINGS } from './settings.ts';

/** What the command line asks for. Settings given as flags come back under their environment names. */
export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'keygen'; argv: string[] }
  | { kind: 'serve'; stdio: boolean; settings: Record<string, string> };

export class CommandLineError extends Error {
  override name = 'CommandLineError';
}

const COMMAND_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  stdio: { type: 'boolean' },
} as const;

/** Every setting is a flag named after its variable (`DAGU_URL` → `--dagu-url`) taking one value. */
const SETTING_OPTIONS = Object.fromEntries(
  SETTINGS.map((setting) => [setting.flag.slice(2), { type: 'string' as const }]),
);

export function parseCommandLine(argv: readonly string[]): Command {
  if (argv[0] === 'keygen') return { kind: 'keygen', argv: argv.slice(1) };
  let parsed: ReturnType<typeof parseArgs<{ options: typeof COMMAND_OPTIONS; strict: true }>>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...SETTING_OPTIONS, ...COMMAND_OPTIONS },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new CommandLineError(`${error instanceof Error ? error.message : String(error)} (see --help)`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };
  const settings: Record<string, string> = {};
  for (const setting of SETTINGS) {
    const value = values[setting.flag.slice(2)];
    if (typeof value === 'string') settings[setting.name] = value;
  }
  return { kind: 'serve', stdio: values.stdio === true, settings };
}

/**
 * Reads `.env` from the working folder into the environment, when there is one. Variables already
 * set in the environment keep their values (Node's `process.loadEnvFile` never overwrites).
 */
export function loadDotEnv(folder: string = process.cwd()): string | undefined {
  const file = join(folder, '.env');
  if (!existsSync(file)) return undefined;
  process.loadEnvFile(file);
  return file;
}

export function helpText(version: string): string {
  const width = Math.max(...SETTINGS.map((setting) => setting.flag.length)) + ' <value>'.length + 2;
  const lines = SETTINGS.map((setting) => {
    const defaults = setting.default === undefined ? '' : `, default ${setting.default}`;
    const allowed = setting.allowed === 'a non-empty value' ? '' : `: ${setting.allowed}`;
    return `  ${`${setting.flag} <value>`.padEnd(width)}${setting.name}${defaults}\n      ${setting.help}${allowed}`;
  });
  return `dagu-mcp-gateway ${version}: a read-only MCP server (dagu_read) in front of a Dagu server.

Usage: dagu-mcp-gateway [--stdio] [--<setting> <value> ...]
       dagu-mcp-gateway keygen [--name NAME] [--role ROLE] ...   (a new API key; keygen --help)

  (no --stdio)   serve MCP over Streamable HTTP on HOST:PORT, path MCP_PATH
  --stdio        serve MCP on stdin/stdout for a local MCP host; logs and audit go to stderr
  --help, -h     print this text
  --version      print the version

Settings: each flag mirrors an environment variable of the same name. A flag wins over the
environment, and the environment wins over a .env file in the working folder.

${lines.join('\n')}
`;
}
