/**
 * Runs test/support/python/oauth_read.py, the Python MCP SDK's OAuth client (a client this project does
 * not write), with the interpreter scripts/python-fixtures.sh mcp-client prepares (MCP_CLIENT_PYTHON,
 * set by scripts/run-tests.mjs). The script announces events on lines of their own
 * (`{"event": ...}`); each is answered by a line on its stdin. Its last line is the result.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface PythonRead {
  isError: boolean;
  dags: string[];
  sheets: number;
  error: unknown;
}

export interface PythonResult {
  tools: string[];
  reads: PythonRead[];
  /** Exceptions that ended a connect or the session's calls (the SDK's OAuth flow raising included). */
  failures: Array<{ step: string; type: string; code: number | null; message: string }>;
  authorizations: number;
  /** Per trip to the authorization endpoint: the scope, resource and prompt the SDK asked for. */
  authorizationRequests: Array<{ scope: string | null; resource: string | null; prompt: string | null }>;
  /** Every access token the SDK saved, oldest first. */
  accessTokens: string[];
  scope: string | null;
  refreshToken: boolean;
  /** Every HTTP exchange of the SDK's HTTP client, in order (the headless user's are not in it). */
  requests: Array<{
    method: string;
    url: string;
    status: number;
    bearer: string | null;
    challenge: string | null;
  }>;
}

export type ScriptEvent = { event: string } & Record<string, unknown>;

/**
 * Runs the script with `args` after its path and `env` added to this process's environment; `answer`
 * gives the line each event is answered with (events are answered one at a time, in order). Fails
 * when `answer` throws (with its error) or the script exits non-zero.
 */
export async function runOAuthRead(
  python: string,
  args: readonly string[],
  env: Record<string, string>,
  answer: (event: ScriptEvent) => Promise<string>,
): Promise<PythonResult> {
  const script = join(import.meta.dirname, 'python', 'oauth_read.py');
  const child = spawn(python, [script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // The script may end without reading stdin (a failure before an event).
  child.stdin.on('error', () => {});
  let stdout = '';
  let stderr = '';
  let seen = 0;
  let answered: Promise<void> = Promise.resolve();
  let failed: unknown;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
    const lines = stdout.split('\n').slice(0, -1);
    for (const line of lines.slice(seen)) {
      if (!line.startsWith('{"event": ')) continue;
      const event = JSON.parse(line) as ScriptEvent;
      answered = answered.then(async () => {
        if (failed !== undefined) return;
        try {
          child.stdin.write(`${await answer(event)}\n`);
        } catch (error) {
          // The script reads an empty line, fails its step and ends; the error is this run's.
          failed = error;
          child.stdin.end();
        }
      });
    }
    seen = lines.length;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  await answered;
  if (failed !== undefined) throw failed;
  assert.equal(code, 0, stderr.slice(-2000));
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as PythonResult;
}
