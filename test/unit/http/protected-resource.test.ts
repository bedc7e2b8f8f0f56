/** RFC 9728 Protected Resource Metadata: its paths, its base URL and the document served at both. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import {
  protectedResourceMetadata,
  protectedResourcePlugin,
  RESOURCE_METADATA_PREFIX,
  resourceMetadataPath,
} from '../../../src/http/protected-resource.ts';

describe('resourceMetadataPath', () => {
  test('the well-known prefix goes before the resource path; trailing slashes and the root add nothing', () => {
    assert.equal(resourceMetadataPath('/mcp'), `${RESOURCE_METADATA_PREFIX}/mcp`);
    assert.equal(resourceMetadataPath('/a/mcp//'), `${RESOURCE_METADATA_PREFIX}/a/mcp`);
    assert.equal(resourceMetadataPath('/'), RESOURCE_METADATA_PREFIX);
  });
});

describe('protectedResourceMetadata', () => {
  test('names the MCP endpoint as the resource; empty lists are left out', () => {
    assert.deepEqual(
      protectedResourceMetadata('https://gw.example', {
        mcpPath: '/mcp',
        authorizationServers: [],
        scopesSupported: [],
      }),
      {
        resource: 'https://gw.example/mcp',
        bearer_methods_supported: ['header'],
        resource_name: 'Dagu MCP Gateway',
      },
    );
  });

  test('issuers, scopes and a name are copied in', () => {
    const servers = ['https://idp.example'];
    const metadata = protectedResourceMetadata('http://h', {
      mcpPath: '/x',
      authorizationServers: servers,
      scopesSupported: ['dagu.read'],
      resourceName: 'Mine',
    });
    assert.deepEqual(metadata.authorization_servers, servers);
    assert.notEqual(metadata.authorization_servers, servers);
    assert.deepEqual(metadata.scopes_supported, ['dagu.read']);
    assert.equal(metadata.resource_name, 'Mine');
  });
});

describe('protectedResourcePlugin', () => {
  test('serves the document at the suffixed and the bare well-known URL, from PUBLIC_URL or the request', async () => {
    const app = Fastify();
    await app.register(protectedResourcePlugin, { mcpPath: '/mcp', scopesSupported: ['dagu.read'] });
    const fixed = Fastify();
    await fixed.register(protectedResourcePlugin, { mcpPath: '/mcp', publicUrl: 'https://public.example/' });
    try {
      for (const url of [`${RESOURCE_METADATA_PREFIX}/mcp`, RESOURCE_METADATA_PREFIX]) {
        const answer = await app.inject({ url, headers: { host: 'gw.internal:8090' } });
        assert.equal(answer.statusCode, 200);
        assert.equal(answer.headers['cache-control'], 'public, max-age=300');
        assert.equal(answer.json().resource, 'http://gw.internal:8090/mcp');
        assert.deepEqual(answer.json().scopes_supported, ['dagu.read']);
      }
      const answer = await fixed.inject({ url: RESOURCE_METADATA_PREFIX, headers: { host: 'ignored' } });
      assert.equal(answer.json().resource, 'https://public.example/mcp');
    } finally {
      await app.close();
      await fixed.close();
    }
  });
});
