/**
 * A local HTTP server that records every request exactly as it arrived (raw request target, headers,
 * connection). With `forwardTo` it proxies each request unchanged to that origin (e.g. the real Dagu)
 * and returns its answer; without, it answers `200 {}`. Used to observe what the gateway sends.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** The raw request target, e.g. `/api/v2/dags/a%20b/spec?x=1` (never normalised). */
  rawUrl: string;
  headers: IncomingHttpHeaders;
  /** Sequence number of the TCP connection the request came on. */
  connection: number;
}

export interface RecordingServer {
  url: string;
  requests: RecordedRequest[];
  connections(): number;
  close(): Promise<void>;
}

export async function startRecordingServer(options: { forwardTo?: string } = {}): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  let connectionCount = 0;
  const ids = new WeakMap<object, number>();
  const target = options.forwardTo === undefined ? undefined : new URL(options.forwardTo);
  const server = createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      rawUrl: req.url ?? '',
      headers: req.headers,
      connection: ids.get(req.socket) ?? 0,
    });
    if (target === undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    connectionCount += 1;
    ids.set(socket, connectionCount);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connectionCount,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
