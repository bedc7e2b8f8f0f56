import { Ajv } from 'ajv';
import {
  ConfigFileError,
  type FileKind,
  parseDocument,
  schemaProblems,
  type WatchedFileOptions,
  watchConfigFile,
} from '../auth/watched-file.ts';

/**
 * Clients an administrator registers ahead (OAUTH_CLIENTS_FILE), for hosts that neither publish a
 * Client ID Metadata Document nor register dynamically:
 *
 *   clients:
 *     - client_id: team-agent
 *       client_name: Team agent
 *       redirect_uris: [https://agent.example.com/oauth/callback]
 *     - client_id: desktop-host
 *       application_type: native       # loopback redirects match on any port (RFC 8252)
 *       redirect_uris: [http://127.0.0.1/callback]
 *     - client_id: ci-runner
 *       client_secret: <at least 32 characters>   # confidential: HTTP Basic at the token endpoint
 *       redirect_uris: [https://ci.example.com/callback]
 */
export interface FileClient {
  client_id: string;
  client_name?: string;
  application_type?: 'web' | 'native';
  redirect_uris: string[];
  client_secret?: string;
}

/** Client metadata as oidc-provider reads it, by client id. */
export type FileClients = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

const validate = new Ajv({ allErrors: true }).compile<{ clients: FileClient[] }>({
  type: 'object',
  required: ['clients'],
  additionalProperties: false,
  properties: {
    clients: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        required: ['client_id', 'redirect_uris'],
        additionalProperties: false,
        properties: {
          // Not a URL: an https client id is a Client ID Metadata Document's.
          client_id: { type: 'string', pattern: '^[A-Za-z0-9._~-]{1,128}$' },
          client_name: { type: 'string', minLength: 1, maxLength: 200 },
          application_type: { enum: ['web', 'native'] },
          redirect_uris: {
            type: 'array',
            minItems: 1,
            maxItems: 20,
            items: { type: 'string', minLength: 1, maxLength: 2000 },
          },
          client_secret: { type: 'string', minLength: 32, maxLength: 512 },
        },
      },
    },
  },
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:']);

/** Why a redirect URI is not one oidc-provider would accept for the client's type, or undefined. */
function redirectProblem(uri: string, native: boolean): string | undefined {
  const url = URL.parse(uri);
  if (url === null) return 'is not an absolute URL';
  if (uri.includes('#')) return 'must not carry a fragment';
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol === 'https:')
    return native && loopback ? 'https on loopback is not a native redirect' : undefined;
  if (url.protocol === 'http:') return loopback ? undefined : 'http only on a loopback address';
  if (!native) return 'a web client redirects to https (or http on loopback)';
  return FORBIDDEN_SCHEMES.has(url.protocol) ? `the ${url.protocol} scheme is not allowed` : undefined;
}

/** The file's clients as oidc-provider metadata; throws ConfigFileError naming every problem. */
export function parseClientFile(text: string, file: string): FileClients {
  const data = parseDocument(text, file, 'clients file');
  if (!validate(data)) {
    throw new ConfigFileError(file, schemaProblems(validate.errors), 'clients file');
  }
  const problems: string[] = [];
  const clients = new Map<string, Readonly<Record<string, unknown>>>();
  data.clients.forEach((client, index) => {
    if (clients.has(client.client_id))
      problems.push(`clients.${index}.client_id: ${client.client_id} is listed twice`);
    client.redirect_uris.forEach((uri, at) => {
      const problem = redirectProblem(uri, client.application_type === 'native');
      if (problem !== undefined) problems.push(`clients.${index}.redirect_uris.${at}: ${problem}`);
    });
    clients.set(
      client.client_id,
      Object.freeze({
        ...client,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: client.client_secret === undefined ? 'none' : 'client_secret_basic',
      }),
    );
  });
  if (problems.length > 0) throw new ConfigFileError(file, problems, 'clients file');
  return clients;
}

const CLIENTS_FILE: FileKind<FileClients> = {
  what: 'clients file',
  contents: 'pre-registered clients',
  parse: (text, file) => ({ value: parseClientFile(text, file), warnings: [] }),
  summary: (clients) => ({ clients: clients.size }),
};

/** The clients file, kept current like the key file (SIGHUP, file changes; a broken edit keeps the old). */
export const watchClientFile = (file: string, options: WatchedFileOptions) =>
  watchConfigFile(file, CLIENTS_FILE, options);
