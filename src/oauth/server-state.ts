import { randomBytes } from 'node:crypto';
import type { AuthServerConfig } from '../config.ts';
import type { RecordStore } from './state/record-store.ts';
import type { UpstreamChecks } from './upstream.ts';

/**
 * What the built-in server remembers besides oidc-provider's own models, in the same store, so that a
 * restart keeps it and every replica sees it: who signed in (the claims their tokens carry), who allowed
 * which client, the sign-ins waiting for the upstream's callback, and the secrets cookies and consent
 * forms are signed with.
 */

/** Redis when replicas share the state, else the embedded store in its folder (one process at a time). */
export async function openStateStore(state: AuthServerConfig['state']): Promise<RecordStore> {
  if (state.redisUrl !== undefined) {
    const { openRedisStore } = await import('./state/redis-store.ts');
    return openRedisStore({ url: state.redisUrl });
  }
  const { openEmbeddedStore } = await import('./state/embedded-store.ts');
  return openEmbeddedStore(state.dir);
}

/** A sign-in sent upstream, waiting for its callback. */
export interface PendingSignIn {
  /** The interaction it resumes. */
  uid: string;
  checks: UpstreamChecks;
}

/** Secrets every instance must share: a form or cookie signed by one replica is checked by another. */
export interface ServerSecrets {
  cookieKey: string;
  csrfKey: string;
}

export interface ServerRecords {
  accountClaims(accountId: string): Promise<Record<string, unknown> | undefined>;
  saveAccount(accountId: string, claims: Record<string, unknown>): Promise<void>;
  hasConsent(accountId: string, clientId: string): Promise<boolean>;
  saveConsent(accountId: string, clientId: string): Promise<void>;
  savePending(state: string, signIn: PendingSignIn): Promise<void>;
  findPending(state: string): Promise<PendingSignIn | undefined>;
  /** The sign-in waiting under `state`, removed in the same step: a callback is redeemed once, on any replica. */
  takePending(state: string): Promise<PendingSignIn | undefined>;
  secrets(): Promise<ServerSecrets>;
}

export interface RecordLifetimes {
  /** Accounts and consents live as long as a refresh token: a refresh needs the account's claims. */
  grantSeconds: number;
  /** A sign-in waiting for the upstream's callback (the interaction's own lifetime). */
  pendingSeconds: number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const asPending = (value: unknown): PendingSignIn | undefined =>
  isObject(value) && typeof value.uid === 'string' && isObject(value.checks)
    ? (value as unknown as PendingSignIn)
    : undefined;

export function serverRecords(store: RecordStore, lifetimes: RecordLifetimes): ServerRecords {
  const consentKey = (accountId: string, clientId: string) =>
    `consent:${JSON.stringify([accountId, clientId])}`;
  return {
    async accountClaims(accountId) {
      const claims = await store.get(`account:${accountId}`);
      return isObject(claims) ? claims : undefined;
    },
    saveAccount: (accountId, claims) => store.put(`account:${accountId}`, claims, lifetimes.grantSeconds),
    hasConsent: async (accountId, clientId) => (await store.get(consentKey(accountId, clientId))) === true,
    saveConsent: (accountId, clientId) =>
      store.put(consentKey(accountId, clientId), true, lifetimes.grantSeconds),
    savePending: (state, signIn) => store.put(`pending:${state}`, signIn, lifetimes.pendingSeconds),
    findPending: async (state) => asPending(await store.get(`pending:${state}`)),
    takePending: async (state) => asPending(await store.take(`pending:${state}`)),
    async secrets() {
      const fresh = {
        cookieKey: randomBytes(32).toString('base64url'),
        csrfKey: randomBytes(32).toString('base64url'),
      };
      await store.putIfAbsent('server-secrets', fresh);
      const kept = await store.get('server-secrets');
      return isObject(kept) && typeof kept.cookieKey === 'string' && typeof kept.csrfKey === 'string'
        ? { cookieKey: kept.cookieKey, csrfKey: kept.csrfKey }
        : fresh;
    },
  };
}
