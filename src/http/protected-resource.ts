import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** RFC 9728 §3: the well-known prefix, inserted between the host and the resource's path. */
export const RESOURCE_METADATA_PREFIX = '/.well-known/oauth-protected-resource';

/** `/.well-known/oauth-protected-resource/mcp` for the MCP endpoint `/mcp`. */
export function resourceMetadataPath(mcpPath: string): string {
  return mcpPath === '/'
    ? RESOURCE_METADATA_PREFIX
    : `${RESOURCE_METADATA_PREFIX}${mcpPath.replace(/\/+$/, '')}`;
}

/**
 * The public base URL: PUBLIC_URL when configured, else derived from the request (its scheme, and the
 * Host the security hook has already checked against ALLOWED_HOSTS).
 */
export function publicBaseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  return (publicUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
}

export interface ProtectedResourceOptions {
  mcpPath: string;
  publicUrl?: string | undefined;
  /** Issuers of the authorization servers whose tokens are accepted (none: the field is omitted). */
  authorizationServers?: readonly string[];
  /** The scopes a client may request (MCP authorization: clients ask for these). */
  scopesSupported?: readonly string[];
  resourceName?: string;
}

export interface ProtectedResourceMetadata {
  resource: string;
  bearer_methods_supported: ['header'];
  resource_name: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
}

export function protectedResourceMetadata(
  baseUrl: string,
  options: ProtectedResourceOptions,
): ProtectedResourceMetadata {
  const metadata: ProtectedResourceMetadata = {
    // The MCP endpoint is the one protected resource; both documents name it (MCP clients compare it
    // with the server URL they were given).
    resource: `${baseUrl}${options.mcpPath}`,
    bearer_methods_supported: ['header'],
    resource_name: options.resourceName ?? 'Dagu MCP Gateway',
  };
  if (options.authorizationServers && options.authorizationServers.length > 0) {
    metadata.authorization_servers = [...options.authorizationServers];
  }
  if (options.scopesSupported && options.scopesSupported.length > 0) {
    metadata.scopes_supported = [...options.scopesSupported];
  }
  return metadata;
}

/**
 * Serves the OAuth 2.0 Protected Resource Metadata (RFC 9728) at the path-suffixed well-known URL the
 * 401 challenge points at, and at the bare well-known URL clients fall back to. Public: no auth hook.
 */
async function protectedResourceRoutes(
  app: FastifyInstance,
  options: ProtectedResourceOptions,
): Promise<void> {
  const paths = new Set([resourceMetadataPath(options.mcpPath), RESOURCE_METADATA_PREFIX]);
  for (const url of paths) {
    app.get(url, async (request, reply) =>
      reply
        .header('cache-control', 'public, max-age=300')
        .send(protectedResourceMetadata(publicBaseUrl(request, options.publicUrl), options)),
    );
  }
}

export const protectedResourcePlugin = fp(protectedResourceRoutes, {
  name: 'dagu-mcp-protected-resource',
  fastify: '5.x',
});
