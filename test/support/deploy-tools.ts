/**
 * The real tools the deployment tests drive (promtool, prometheus, docker-compose, helm, haproxy), installed on
 * first use by scripts/deploy-tools.sh. Under CI (isCI()) a tool that cannot be had fails the test file,
 * naming the tool; on a developer's machine without apt-get or Go the tests that need it skip and say why
 * (`skipUnlessCI(lookup.reason)`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { isCI } from './ci.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const repoPath = (...parts: string[]) => join(ROOT, ...parts);
export const readRepoFile = (...parts: string[]) => readFileSync(repoPath(...parts), 'utf8');
export const readRepoYaml = <T>(...parts: string[]) => parse(readRepoFile(...parts)) as T;

export type DeployTool = 'promtool' | 'prometheus' | 'docker-compose' | 'helm' | 'haproxy';

export interface ToolLookup {
  path?: string;
  /** Why the tool is missing (then `path` is undefined). */
  reason?: string;
}

const found = new Map<DeployTool, ToolLookup>();

/** Installs (once per process) and locates a tool; throws under CI when it cannot be had. */
export function deployTool(tool: DeployTool): ToolLookup {
  const known = found.get(tool);
  if (known !== undefined) return known;
  const result = spawnSync('bash', [repoPath('scripts', 'deploy-tools.sh'), tool], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  const path = (result.stdout ?? '').trim().split('\n').at(-1)?.trim();
  let lookup: ToolLookup;
  if (result.status === 0 && path) lookup = { path };
  else {
    const reason = `${tool} unavailable: ${(result.stderr ?? '').trim().split('\n').slice(-5).join(' | ') || String(result.error)}`;
    if (isCI()) throw new Error(`CI: a deployment test needs ${tool}: ${reason}`);
    lookup = { reason };
  }
  found.set(tool, lookup);
  return lookup;
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a tool synchronously and returns its exit status and output. */
export function run(
  binary: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Run {
  const result = spawnSync(binary, args, {
    encoding: 'utf8',
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Every environment name the gateway's configuration reads, observed on real loadConfig calls: once
 * with nothing set, once with tracing turned on (the other `OTEL_*` names are read only then).
 */
export function namesTheGatewayReads(): Set<string> {
  const read = new Set<string>();
  for (const given of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.invalid:4318' }] as const) {
    const env = new Proxy({} as NodeJS.ProcessEnv, {
      get(_target, key) {
        if (typeof key !== 'string') return undefined;
        read.add(key);
        return (given as Record<string, string>)[key];
      },
    });
    try {
      loadConfig(env);
    } catch {
      // A configuration that requires a value refuses the empty one; the names it read are known anyway.
    }
  }
  return read;
}
