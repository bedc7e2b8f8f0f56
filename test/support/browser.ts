/**
 * Real-browser support for the browser tests (test/integration/browser): Debian's Chromium made
 * available by scripts/chromium.sh (apt-get, once; CHROMIUM_BIN overrides), driven headless by
 * playwright-core; the MCP test page bundled with esbuild; a static server for pages on 127.0.0.1; and
 * the artifacts folder (`test-artifacts/`, git-ignored) screenshots are kept in.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { ROOT } from './bin.ts';

/** Where tests keep what a person should be able to look at afterwards (screenshots). */
export const ARTIFACTS_DIR = join(ROOT, 'test-artifacts');

let found: { path?: string; reason?: string } | undefined;

/** The Chromium binary (installed with apt-get by scripts/chromium.sh when missing and root), or why not. */
export function chromiumBinary(): { path?: string; reason?: string } {
  if (found !== undefined) return found;
  const result = spawnSync('bash', [join(ROOT, 'scripts', 'chromium.sh')], { encoding: 'utf8' });
  const path = result.stdout.trim().split('\n').at(-1);
  found =
    result.status === 0 && path
      ? { path }
      : {
          reason: `Chromium unavailable: ${result.stderr.trim().split('\n').at(-1) ?? `exit ${result.status}`}`,
        };
  return found;
}

/** Why Chromium is missing, or false. A test skips with `skipUnlessCI(chromiumMissing())` (CI: fails). */
export const chromiumMissing = (): string | false => chromiumBinary().reason ?? false;

/** Headless Chromium. Root (CI containers) cannot use Chromium's sandbox. */
export async function launchChromium(): Promise<Browser> {
  const { path, reason } = chromiumBinary();
  if (path === undefined) throw new Error(reason);
  return chromium.launch({
    executablePath: path,
    headless: true,
    args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** The MCP test page's script: test/support/browser-page/mcp-page.ts with the SDK client, for browsers. */
export async function bundleMcpPage(): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, 'test', 'support', 'browser-page', 'mcp-page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild produced no output');
  return output.text;
}

export const MCP_PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>MCP browser client</title></head>
<body><h1>MCP browser client</h1><ol id="log"></ol><script type="module" src="/mcp-page.js"></script></body>
</html>`;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

export interface StaticServer {
  /** `http://127.0.0.1:<port>` (reach it as `http://localhost:<port>` for another origin). */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves pages on 127.0.0.1: `files` by path (`/mcp-page.js`), else files below `folder`, else the
 * folder's `index.html` (a single-page app's routes). Nothing outside the folder is served.
 */
export async function startStaticServer(options: {
  files?: Readonly<Record<string, string>>;
  folder?: string;
}): Promise<StaticServer> {
  const files = { ...options.files };
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? '/').split('?', 1)[0] ?? '/');
    const answer = (body: string | Buffer, type: string) => {
      response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(body);
    };
    const inline = files[path === '/' ? '/index.html' : path];
    if (inline !== undefined) return answer(inline, TYPES[extname(path)] ?? TYPES['.html']!);
    if (options.folder !== undefined) {
      const root = normalize(options.folder);
      const file = normalize(join(root, path));
      const inside = file.startsWith(root + sep);
      const isFile = inside && statSync(file, { throwIfNoEntry: false })?.isFile() === true;
      const target = isFile ? file : join(root, 'index.html');
      return answer(readFileSync(target), TYPES[extname(target)] ?? 'application/octet-stream');
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A path in the artifacts folder (created), for a file a test keeps. */
export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return join(ARTIFACTS_DIR, name);
}
