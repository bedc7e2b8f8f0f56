import type { Adapter, AdapterPayload } from 'oidc-provider';

interface Entry {
  payload: AdapterPayload;
  expiresAt: number;
}

/**
 * oidc-provider's storage in this process: registrations, grants, codes, sessions and refresh tokens.
 * A restart forgets them (hosts sign in again). A registered client's `scope` is not kept: oidc-provider
 * would pin the client to the scopes it registered with, and MCP hosts register with the first
 * challenge's scope and later step up to a wider one.
 */
export function memoryAdapter(): { adapter: (model: string) => Adapter; clear(): void } {
  const store = new Map<string, Entry>();
  const live = (key: string): AdapterPayload | undefined => {
    const entry = store.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  // Expired entries go when read and on this sweep, so nothing grows without bound.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, entry] of store) if (entry.expiresAt <= now) store.delete(key);
  }, 60_000);
  sweep.unref();
  const adapter = (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`;
    const findBy = (field: 'uid' | 'userCode', value: string) => {
      for (const [stored, entry] of store) {
        if (stored.startsWith(`${model}:`) && entry.payload[field] === value) return live(stored);
      }
      return undefined;
    };
    return {
      async upsert(id, payload, expiresIn) {
        const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
        const kept = model === 'Client' ? (({ scope: _pinned, ...rest }) => rest)(payload) : payload;
        store.set(key(id), { payload: kept, expiresAt });
      },
      find: async (id) => live(key(id)),
      findByUid: async (uid) => findBy('uid', uid),
      findByUserCode: async (userCode) => findBy('userCode', userCode),
      async consume(id) {
        const payload = live(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        store.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const [stored, entry] of store) if (entry.payload.grantId === grantId) store.delete(stored);
      },
    };
  };
  return {
    adapter,
    clear() {
      clearInterval(sweep);
      store.clear();
    },
  };
}
