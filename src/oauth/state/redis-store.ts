import { Redis } from 'ioredis';
import type { RecordStore } from './record-store.ts';

/**
 * The fleet's store: Redis, shared by every replica (records under `dagu-mcp-gateway:oauth:`). Records
 * are JSON strings with Redis's own expiry; a set's expiry grows to its longest-lived member's, in one
 * script so that replicas adding to the same grant do not shorten it.
 */

const KEY_PREFIX = 'dagu-mcp-gateway:oauth:';

// KEYS[1] the set, ARGV[1] the member, ARGV[2] its lifetime in seconds or "" for none.
// A set that existed with no expiry (TTL -1) keeps living forever.
const ADD_TO_SET = `
local existed = redis.call('EXISTS', KEYS[1])
redis.call('SADD', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[1])
else
  local ttl = redis.call('TTL', KEYS[1])
  local wanted = tonumber(ARGV[2])
  if existed == 0 or (ttl ~= -1 and ttl < wanted) then redis.call('EXPIRE', KEYS[1], wanted) end
end
return 1`;

// KEYS[1] the record: its value, deleted in the same step (GETDEL, on Redis older than 6.2 too).
const TAKE = `
local value = redis.call('GET', KEYS[1])
if value then redis.call('DEL', KEYS[1]) end
return value`;

/** Whole seconds, at least one (Redis counts in seconds; a fraction must not mean "no lifetime"). */
const seconds = (ttl: number) => Math.max(1, Math.ceil(ttl));

export interface RedisStoreOptions {
  url: string;
  /** How long one command may take before it fails. Default 2 s. */
  commandTimeoutMs?: number;
}

export async function openRedisStore(options: RedisStoreOptions): Promise<RecordStore> {
  const redis = new Redis(options.url, {
    keyPrefix: KEY_PREFIX,
    lazyConnect: true,
    commandTimeout: options.commandTimeoutMs ?? 2_000,
    maxRetriesPerRequest: 1,
  });
  await redis.connect();
  const encode = (value: unknown) => JSON.stringify(value);
  const decode = (text: string | null) => (text === null ? undefined : (JSON.parse(text) as unknown));

  return {
    kind: 'redis',
    async get(key) {
      return decode(await redis.get(key));
    },
    async put(key, value, ttlSeconds) {
      if (ttlSeconds === undefined) await redis.set(key, encode(value));
      else await redis.set(key, encode(value), 'EX', seconds(ttlSeconds));
    },
    async putIfAbsent(key, value, ttlSeconds) {
      const answer =
        ttlSeconds === undefined
          ? await redis.set(key, encode(value), 'NX')
          : await redis.set(key, encode(value), 'EX', seconds(ttlSeconds), 'NX');
      return answer === 'OK';
    },
    async replace(key, value) {
      return (await redis.set(key, encode(value), 'KEEPTTL', 'XX')) === 'OK';
    },
    async remove(keys) {
      if (keys.length > 0) await redis.del(...keys);
    },
    async take(key) {
      return decode((await redis.eval(TAKE, 1, key)) as string | null);
    },
    async addToSet(key, member, ttlSeconds) {
      await redis.eval(
        ADD_TO_SET,
        1,
        key,
        member,
        ttlSeconds === undefined ? '' : String(seconds(ttlSeconds)),
      );
    },
    members: (key) => redis.smembers(key),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
