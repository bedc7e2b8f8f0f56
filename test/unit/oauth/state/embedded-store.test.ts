// The single-instance store: LevelDB in a temporary folder, under the RecordStore contract.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openEmbeddedStore } from '../../../../src/oauth/state/embedded-store.ts';
import { recordStoreContract } from '../../../support/record-store-contract.ts';
import { tempDir } from '../../../support/temp.ts';

describe('embedded store (LevelDB)', () => {
  const folder = tempDir('oauth-state-');
  recordStoreContract(() => openEmbeddedStore(folder));
});

test('a second handle on a folder in use is refused, not shared, with an error that names the way out', async () => {
  const folder = tempDir('oauth-state-');
  const first = await openEmbeddedStore(folder);
  try {
    await assert.rejects(openEmbeddedStore(folder), /is in use by another gateway process.*Redis/);
  } finally {
    await first.close();
  }
});
