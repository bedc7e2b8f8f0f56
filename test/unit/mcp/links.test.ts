/** Resource links for returned URIs, named after the contract's resource-link table. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resourceLinkFor } from '../../../src/mcp/links.ts';

test('a returned URI gets the link name and MIME type of its shape', () => {
  assert.deepEqual(resourceLinkFor('dagu://runs/etl/r1/steps/load/logs'), {
    type: 'resource_link',
    uri: 'dagu://runs/etl/r1/steps/load/logs',
    name: 'dag_run_step_log',
    mimeType: 'application/json',
  });
  assert.equal(resourceLinkFor('dagu://dags/etl/spec').mimeType, 'application/yaml');
  assert.equal(resourceLinkFor('dagu://wiki/default/ops/page').name, 'wiki_page');
  assert.equal(resourceLinkFor('dagu://reference/tools').mimeType, 'text/markdown');
});

test('a URI of no shape is a bug of the gateway, thrown, not answered as a caller error', () => {
  assert.throws(() => resourceLinkFor('dagu://nowhere/x'), /no resource-link shape for a returned URI/);
  assert.throws(() => resourceLinkFor('https://example.com'), /no resource-link shape/);
});
