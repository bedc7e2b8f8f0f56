import { errors } from 'oidc-provider';
import type { RecordStore } from './record-store.ts';

/**
 * `oidc-provider`'s adapter over a RecordStore: each model instance is a record `<Model>:<id>` with the
 * lifetime the provider gives it, a session is also found by its `uid`, a device flow by its user
 * code, and each grant keeps the set of its tokens and codes so that revoking the grant removes them
 * all (a revoked refresh token's access tokens included). A code or refresh token is consumed once
 * across every replica (see `consume`). The provider's contract is its `Adapter`
 * interface (oidc-provider's `lib/adapters/memory_adapter.js` is its reference implementation).
 */

/** What the provider stores: JSON objects; these are the fields the indexes read. */
export interface AdapterPayload {
  [field: string]: unknown;
  grantId?: string;
  userCode?: string;
  uid?: string;
  jti?: string;
  consumed?: number;
}

export interface ProviderAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** Models whose instances belong to a grant (`grantId`), as oidc-provider's reference adapter has them. */
const GRANTABLE: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

const grantKey = (grantId: string) => `grant:${grantId}`;
const sessionUidKey = (uid: string) => `sessionUid:${uid}`;
const userCodeKey = (userCode: string) => `userCode:${userCode}`;
const consumedKey = (recordKey: string) => `consumed:${recordKey}`;

/** Seconds until a payload's `exp` (at least 1); an hour when it has none. */
const secondsLeft = (payload: AdapterPayload): number =>
  typeof payload.exp === 'number' ? Math.max(1, payload.exp - Math.floor(Date.now() / 1000)) : 3600;

const asPayload = (value: unknown): AdapterPayload | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as AdapterPayload)
    : undefined;

function withoutScope({ scope: _pinned, ...rest }: AdapterPayload): AdapterPayload {
  return rest;
}

/**
 * The adapter factory `oidc-provider` takes as its `adapter` option: one adapter per model name.
 * `fileClients` are the administrator's pre-registered clients, read before the stored ones (and
 * looked up on every find, so that a reload of their file takes effect at once).
 */
export function providerAdapter(
  store: RecordStore,
  fileClients: () => ReadonlyMap<string, Readonly<AdapterPayload>> = () => new Map(),
): (model: string) => ProviderAdapter {
  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    const stored = async (id: string | undefined) =>
      id === undefined ? undefined : asPayload(await store.get(key(id)));
    const find =
      model === 'Client'
        ? async (id: string | undefined) =>
            (id === undefined ? undefined : fileClients().get(id)) ?? stored(id)
        : stored;
    const idAt = async (indexKey: string) => {
      const id = await store.get(indexKey);
      return typeof id === 'string' ? id : undefined;
    };
    const revokeByGrantId = async (grantId: string) => {
      const members = await store.members(grantKey(grantId));
      await store.remove([...members, grantKey(grantId)]);
    };
    return {
      async upsert(id, payload, expiresIn) {
        // A client's registered `scope` is not kept: oidc-provider would pin the client to the scopes it
        // registered with, and MCP hosts register with the first challenge's scope, then step up.
        const kept = model === 'Client' ? withoutScope(payload) : payload;
        const writes: Array<Promise<unknown>> = [store.put(key(id), kept, expiresIn)];
        if (model === 'Session' && typeof payload.uid === 'string') {
          writes.push(store.put(sessionUidKey(payload.uid), id, expiresIn));
        }
        if (GRANTABLE.has(model) && typeof payload.grantId === 'string') {
          writes.push(store.addToSet(grantKey(payload.grantId), key(id), expiresIn));
        }
        if (typeof payload.userCode === 'string')
          writes.push(store.put(userCodeKey(payload.userCode), id, expiresIn));
        await Promise.all(writes);
      },
      find,
      findByUid: async (uid) => find(await idAt(sessionUidKey(uid))),
      findByUserCode: async (userCode) => find(await idAt(userCodeKey(userCode))),
      async consume(id) {
        const payload = await find(id);
        if (payload === undefined) return;
        // oidc-provider checks `consumed`, then consumes: two redemptions at once (on two replicas)
        // would both pass its check. The first to write the marker consumes; the other is a replay,
        // refused and its grant revoked as oidc-provider does with a used code or refresh token.
        if (!(await store.putIfAbsent(consumedKey(key(id)), true, secondsLeft(payload)))) {
          if (typeof payload.grantId === 'string') await revokeByGrantId(payload.grantId);
          throw new errors.InvalidGrant('grant already used');
        }
        await store.replace(key(id), { ...payload, consumed: Math.floor(Date.now() / 1000) });
      },
      async destroy(id) {
        await store.remove([key(id)]);
      },
      revokeByGrantId,
    };
  };
}
