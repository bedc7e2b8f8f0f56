import { ClassicLevel } from 'classic-level';
import { expiryOf, type RecordStore } from './record-store.ts';

/**
 * The single-instance store: LevelDB (`classic-level`) in a folder of its own. LevelDB is an embedded
 * key-value store made for this: crash-safe writes through its log, no server, one process holding the
 * folder (a second process gets an open error, not a corrupted store), and prebuilt binaries in its
 * npm package. Expired records are dropped when read and by a sweep every `sweepMs`.
 */

interface Stored {
  /** The value, or a set's members. */
  v: unknown;
  /** Expiry in epoch milliseconds; absent: never. */
  e?: number;
}

type Db = ClassicLevel<string, Stored>;

const DEFAULT_SWEEP_MS = 10 * 60_000;

/** A record expiring at `expiry` (epoch ms, `Infinity`: never). */
const stored = (value: unknown, expiry: number): Stored =>
  Number.isFinite(expiry) ? { v: value, e: expiry } : { v: value };

/** Writes to one key are read-modify-write (sets, replace): they run one after another per key. */
function perKeyQueue() {
  const queues = new Map<string, Promise<unknown>>();
  const serially = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const next = (queues.get(key) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => undefined);
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  };
  return { serially, drained: () => Promise.all(queues.values()) };
}

/** The record at `key` while its lifetime lasts (an expired one is deleted). */
async function live(db: Db, key: string): Promise<Stored | undefined> {
  const record = await db.get(key);
  if (record === undefined) return undefined;
  if (record.e !== undefined && record.e <= Date.now()) {
    await db.del(key);
    return undefined;
  }
  return record;
}

/** Drops every expired record. */
async function sweep(db: Db): Promise<void> {
  const now = Date.now();
  const expired: string[] = [];
  for await (const [key, record] of db.iterator()) {
    if (record.e !== undefined && record.e <= now) expired.push(key);
  }
  if (expired.length > 0) await db.batch(expired.map((key) => ({ type: 'del' as const, key })));
}

export async function openEmbeddedStore(
  folder: string,
  options: { sweepMs?: number } = {},
): Promise<RecordStore> {
  const db: Db = new ClassicLevel<string, Stored>(folder, { valueEncoding: 'json' });
  try {
    await db.open();
  } catch (error) {
    // LevelDB's lock: one process per folder. Replicas share their state through Redis instead.
    if ((error as { cause?: { code?: string } }).cause?.code !== 'LEVEL_LOCKED') throw error;
    throw new Error(
      `the state folder ${folder} is in use by another gateway process; give each its own folder, or share state through Redis`,
    );
  }
  const { serially, drained } = perKeyQueue();
  await sweep(db);
  const sweeper = setInterval(
    () => void sweep(db).catch(() => undefined),
    options.sweepMs ?? DEFAULT_SWEEP_MS,
  );
  sweeper.unref();

  return {
    kind: 'embedded',
    async get(key) {
      return (await live(db, key))?.v;
    },
    put: (key, value, ttlSeconds) => serially(key, () => db.put(key, stored(value, expiryOf(ttlSeconds)))),
    putIfAbsent: (key, value, ttlSeconds) =>
      serially(key, async () => {
        if ((await live(db, key)) !== undefined) return false;
        await db.put(key, stored(value, expiryOf(ttlSeconds)));
        return true;
      }),
    replace: (key, value) =>
      serially(key, async () => {
        const previous = await live(db, key);
        if (previous === undefined) return false;
        await db.put(key, stored(value, previous.e ?? Number.POSITIVE_INFINITY));
        return true;
      }),
    async remove(keys) {
      await Promise.all(keys.map((key) => serially(key, () => db.del(key))));
    },
    take: (key) =>
      serially(key, async () => {
        const record = await live(db, key);
        if (record !== undefined) await db.del(key);
        return record?.v;
      }),
    addToSet: (key, member, ttlSeconds) =>
      serially(key, async () => {
        const previous = await live(db, key);
        const members = new Set(Array.isArray(previous?.v) ? (previous.v as string[]) : []);
        members.add(member);
        const kept = previous === undefined ? 0 : (previous.e ?? Number.POSITIVE_INFINITY);
        await db.put(key, stored([...members], Math.max(kept, expiryOf(ttlSeconds))));
      }),
    async members(key) {
      const record = await live(db, key);
      return Array.isArray(record?.v) ? [...(record.v as string[])] : [];
    },
    async close() {
      clearInterval(sweeper);
      await drained();
      await db.close();
    },
  };
}
