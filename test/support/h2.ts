// HTTP/2 clients for the native-TLS tests: node:http2 sessions trusting the test CA, a POST that
// sends its body, one that announces a body and sends it late or never, and a ClientHello to send
// by hand (a client that stops in the middle of its TLS handshake).
import { type ClientHttp2Session, connect as http2Connect, type IncomingHttpHeaders } from 'node:http2';
import { createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** The headers of an MCP POST as the SDK clients send them. */
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
} as const;

/** A connected h2 session to `baseUrl` (https) trusting `ca`. */
export async function openSession(baseUrl: string, ca: string): Promise<ClientHttp2Session> {
  const session = http2Connect(baseUrl, { ca });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  return session;
}

/** One request over a node:http2 session (`body` sent as JSON when given): its status and text. */
function exchange(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let text = '';
    stream.on('response', (answer) => {
      status = Number(answer[':status']);
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
    });
    stream.on('end', () => resolve({ status, text }));
    stream.on('error', reject);
    if (body !== undefined) stream.end(JSON.stringify(body));
  });
}

/** The JSON body and status of a POST over a node:http2 session. */
export async function http2Post(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { status, text } = await exchange(session, { ':method': 'POST', ':path': path, ...headers }, body);
  return { status, body: JSON.parse(text) as Record<string, unknown> };
}

/** The status and text body of a GET over a node:http2 session. */
export const http2Get = (session: ClientHttp2Session, path: string) => exchange(session, { ':path': path });

/** What became of a stream that did not send its whole body in time. */
export interface StalledStream {
  status: number;
  body: string;
  /** From the request to its answer's headers (NaN when none came). */
  answeredMs: number;
  /** From the request to the stream's close. */
  closedMs: number;
  /** The RST_STREAM code the stream closed with (0 = NO_ERROR). */
  rstCode: number | undefined;
}

/**
 * A POST announcing `Content-Length: 100` whose body is never sent (`trickle` unset) or sent one byte
 * every `trickle.everyMs`; resolves when the stream closes, rejects after `deadlineMs`.
 */
export function stalledPost(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
  options: { deadlineMs: number; trickle?: { everyMs: number } },
): Promise<StalledStream> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const stream = session.request(
      { ':method': 'POST', ':path': path, ...headers, 'content-length': '100' },
      { endStream: false },
    );
    let status = 0;
    let answeredMs = Number.NaN;
    let body = '';
    const trickle =
      options.trickle === undefined
        ? undefined
        : setInterval(() => {
            if (stream.writable) stream.write('{');
          }, options.trickle.everyMs);
    const deadline = setTimeout(() => {
      clearInterval(trickle);
      // destroy, not close: a close waits for pending writes, and the session's close for this stream.
      stream.destroy();
      reject(new Error(`the stream was still open after ${options.deadlineMs} ms (status ${status})`));
    }, options.deadlineMs);
    const closed = () => {
      clearInterval(trickle);
      clearTimeout(deadline);
      resolve({ status, body, answeredMs, closedMs: performance.now() - started, rstCode: stream.rstCode });
    };
    stream.on('response', (answer: IncomingHttpHeaders) => {
      status = Number(answer[':status']);
      answeredMs = performance.now() - started;
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      body += chunk;
    });
    stream.on('error', () => {});
    // The peer's RST_STREAM while this side still writes: Node's client then waits for the pending write
    // (a trickled byte) that never completes, and its `close` never comes (a stuck stream under load in
    // up to 35 of 40 such streams: rstCode 0, writableLength 1). Taken as the close, and destroyed.
    stream.on('aborted', () => {
      closed();
      stream.destroy();
    });
    stream.on('close', closed);
  });
}

/** The first bytes a TLS client sends (its ClientHello), captured from node:tls on a local socket. */
export function clientHello(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const capture = createServer((socket) =>
      socket.once('data', (hello: Buffer) => {
        resolve(hello);
        socket.destroy();
        capture.close();
      }),
    );
    capture.once('error', reject);
    capture.listen(0, '127.0.0.1', () => {
      const { port } = capture.address() as { port: number };
      tlsConnect({ host: '127.0.0.1', port, servername: 'localhost' }).on('error', () => {});
    });
  });
}
