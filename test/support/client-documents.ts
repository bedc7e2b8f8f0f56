/**
 * Client ID Metadata Documents served over https on loopback, as a host publishes them: a server on
 * 127.0.0.1 with a certificate of a throwaway test CA (its file given to the gateway as
 * OAUTH_CLIENT_ID_CA_FILE), answering each path with what the test set for it.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestCa } from './tls.ts';

export interface ServedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

export interface ClientDocuments {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** The test CA's certificate file, for OAUTH_CLIENT_ID_CA_FILE. */
  caFile: string;
  /** Answers `path` with `answer` from now on. */
  set(path: string, answer: ServedAnswer): void;
  /** Serves `document(url)` as JSON at `path` and returns its URL (the client id). */
  serve(
    path: string,
    document: (url: string) => unknown,
    answer?: { status?: number; headers?: Record<string, string> },
  ): string;
  close(): Promise<void>;
}

/** A metadata document of a native MCP host whose client id is `url`. */
export const clientDocument = (url: string) => ({
  client_id: url,
  client_name: 'builtin-server tests (metadata document)',
  redirect_uris: ['http://127.0.0.1:9/oauth/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  application_type: 'native',
});

export async function startClientDocuments(): Promise<ClientDocuments> {
  const ca = createTestCa();
  const certificate = ca.issue('documents');
  const served = new Map<string, ServedAnswer>();
  const server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const answer = served.get(req.url ?? '');
    if (answer === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    caFile: ca.caFile,
    set: (path, answer) => served.set(path, answer),
    serve(path, document, answer = {}) {
      const documentUrl = `${url}${path}`;
      served.set(path, {
        status: answer.status ?? 200,
        ...(answer.headers ? { headers: answer.headers } : {}),
        body: JSON.stringify(document(documentUrl)),
      });
      return documentUrl;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      ca.remove();
    },
  };
}
