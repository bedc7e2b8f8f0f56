// The contract every RecordStore of the authorization server keeps (src/oauth/state/record-store.ts),
// run by the tests of each store: records with lifetimes, compare-and-set, sets whose lifetime grows,
// and all of it kept across a reopen (a restart).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RecordStore } from '../../src/oauth/state/record-store.ts';

/** Waits until `check` holds, checking every 50 ms, for at most `ms`: a record's expiry is the event. */
export async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Registers the contract's tests; `open` gives a new handle on the same state each call. */
export function recordStoreContract(open: () => Promise<RecordStore>): void {
  let store: RecordStore;
  before(async () => {
    store = await open();
  });
  after(async () => {
    await store?.close();
  });

  test('records: put, get, remove; a lifetime ends the record', async () => {
    await store.put('a', { n: 1 });
    await store.put('b', { n: 2 }, 1);
    assert.deepEqual(await store.get('a'), { n: 1 });
    assert.deepEqual(await store.get('b'), { n: 2 });
    await store.remove(['a']);
    assert.equal(await store.get('a'), undefined);
    await until(async () => (await store.get('b')) === undefined, 5_000, 'the 1 s record to expire');
  });

  test('putIfAbsent writes once; replace keeps the lifetime and needs a record', async () => {
    assert.equal(await store.putIfAbsent('once', 'first', 60), true);
    assert.equal(await store.putIfAbsent('once', 'second', 60), false);
    assert.equal(await store.get('once'), 'first');
    assert.equal(await store.replace('once', 'third'), true);
    assert.equal(await store.get('once'), 'third');
    assert.equal(await store.replace('never-written', 'x'), false);
    assert.equal(await store.get('never-written'), undefined);
    await store.put('short', 1, 1);
    await store.replace('short', 2);
    await until(async () => (await store.get('short')) === undefined, 5_000, 'the replaced record to expire');
  });

  test('take: the record removed as it is read; of two takers at once, one gets it', async () => {
    await store.put('taken', { n: 1 }, 60);
    const both = await Promise.all([store.take('taken'), store.take('taken')]);
    assert.deepEqual(
      both.filter((value) => value !== undefined),
      [{ n: 1 }],
    );
    assert.equal(await store.get('taken'), undefined);
    assert.equal(await store.take('never-written'), undefined);
  });

  test('a set lives as long as its longest-lived member, and lists its members', async () => {
    await store.addToSet('set', 'x', 1);
    await store.addToSet('set', 'y', 3600);
    await store.addToSet('set', 'x', 1);
    assert.deepEqual((await store.members('set')).sort(), ['x', 'y']);
    await store.addToSet('short-set', 'z', 1);
    await until(async () => (await store.members('short-set')).length === 0, 5_000, 'the set to expire');
    assert.deepEqual((await store.members('set')).sort(), ['x', 'y'], 'the long member keeps its set');
  });

  test('what was written is there after a reopen (a restart)', async () => {
    await store.put('kept', { since: 'before' }, 600);
    await store.addToSet('kept-set', 'm', 600);
    await store.close();
    store = await open();
    assert.deepEqual(await store.get('kept'), { since: 'before' });
    assert.deepEqual(await store.members('kept-set'), ['m']);
  });
}
