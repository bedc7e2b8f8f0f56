/**
 * A fake upstream for the faults a real Dagu cannot produce on demand: a hang, a connection reset, a
 * 5xx, an empty 500, malformed JSON and a body cut short. Everything else is tested against the real
 * Dagu (test/support/dagu.ts). The fault is chosen by a path segment of the request that names it.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const FAULTS = {
  /** Accepts the request and never answers. */
  hang: 'hang',
  /** Destroys the connection before any answer. */
  reset: 'reset',
  /** 503 with a JSON error body naming an absolute path and carrying a stack trace. */
  unavailable: 'unavailable',
  /** 500 with an empty body. */
  emptyServerError: 'empty-500',
  /** 404 whose body is only whitespace. */
  blankNotFound: 'blank-404',
  /** 200 with a body that is not JSON. */
  malformed: 'malformed',
  /** 200 announcing more bytes than it sends, then closing. */
  truncated: 'truncated',
  /** 200 `{"ok":true}`. */
  ok: 'ok',
} as const;

export interface FaultServer {
  url: string;
  close(): Promise<void>;
}

export async function startFaultServer(): Promise<FaultServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const segments = (req.url ?? '').split('?')[0]?.split('/') ?? [];
    const fault = Object.values(FAULTS).find((name) => segments.includes(name));
    switch (fault) {
      case FAULTS.hang:
        return;
      case FAULTS.reset:
        req.socket.destroy();
        return;
      case FAULTS.unavailable:
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            code: 'internal_error',
            message:
              'error reading /var/lib/dagu/logs/x/dag-run.log: open failed\ngoroutine 1 [running]:\nmain.go:12',
          }),
        );
        return;
      case FAULTS.emptyServerError:
        res.writeHead(500).end();
        return;
      case FAULTS.blankNotFound:
        res.writeHead(404, { 'content-type': 'application/json' }).end(' \r\n\t\n');
        return;
      case FAULTS.malformed:
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"dagRuns": [');
        return;
      case FAULTS.truncated:
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"dagRuns": []');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      default:
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
