/**
 * A real Keycloak for the end-to-end tests: the Maven Central distribution installed by
 * scripts/keycloak.sh, started with `kc.sh start-dev` on 127.0.0.1 (free ports, an in-memory database,
 * its transaction log and temporary files in a temporary folder), ready when its health endpoint says
 * so, and stopped at the end. `daguRealm` writes the realm docs/oauth-keycloak.md describes, imported
 * through the admin REST API; `authorizeWithKeycloak` is a headless user agent that signs in and
 * consents through Keycloak's own HTML forms (fetch with manual redirects and a cookie jar).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ROOT } from './bin.ts';
import { isCI } from './ci.ts';
import { freePort } from './dagu.ts';
import {
  type CallbackParams,
  type PageAnswerer,
  type UserCredentials,
  walkToRedirect,
} from './oauth-clients.ts';

/** kc.sh of the installed Keycloak, or why there is none (a failure under CI). */
export function keycloakScript(): { path: string } | { reason: string } {
  const prepared = spawnSync('bash', [join(ROOT, 'scripts', 'keycloak.sh')], { encoding: 'utf8' });
  const path = prepared.stdout.trim().split('\n').at(-1);
  if (prepared.status === 0 && path) return { path };
  const reason = `Keycloak unavailable (scripts/keycloak.sh): ${prepared.stderr.trim().split('\n').slice(-3).join(' | ')}`;
  if (isCI()) throw new Error(`CI: ${reason}`);
  return { reason };
}

/** For a test file: kc.sh, or why there is none (for its skip, through skipUnlessCI). */
export function keycloakForTests(): { kcScript: string | undefined; unavailable: string | false } {
  const installed = keycloakScript();
  return 'reason' in installed
    ? { kcScript: undefined, unavailable: installed.reason }
    : { kcScript: installed.path, unavailable: false };
}

export interface Keycloak {
  /** `http://127.0.0.1:<port>`: realms live under `/realms/<name>`. */
  url: string;
  /** From the spawn to a ready health endpoint. */
  startupMs: number;
  issuer(realm: string): string;
  /** Creates a realm from its JSON representation (what a realm export holds). */
  importRealm(realm: Record<string, unknown>): Promise<void>;
  /** The admin REST API under `/admin/realms/<realm>`, as the bootstrap administrator. */
  admin(realm: string, path: string, init?: RequestInit): Promise<Response>;
  /** What Keycloak wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Keycloak on 2 loaded cores takes 30–90 s; the first start after an install also builds (≈60 s). */
const STARTUP_DEADLINE_MS = 300_000;

export async function startKeycloak(kcScript: string): Promise<Keycloak> {
  const [port, managementPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'gateway-keycloak-'));
  const adminUser = 'admin';
  const adminPassword = randomBytes(18).toString('base64url');
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  let output = '';
  const child: ChildProcess = spawn(
    kcScript,
    [
      'start-dev',
      '--db=dev-mem',
      '--http-host=127.0.0.1',
      `--http-port=${port}`,
      `--http-management-port=${managementPort}`,
      '--health-enabled=true',
    ],
    {
      // Its own process group: stop() ends kc.sh and the JVM it runs.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        KC_BOOTSTRAP_ADMIN_USERNAME: adminUser,
        KC_BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
        // Keycloak's default heap is a share of the machine's memory; a test realm needs little.
        JAVA_OPTS_KC_HEAP: '-Xms64m -Xmx512m',
        // Its transaction log and temporary files go to this run's folder, not the cached install.
        JAVA_OPTS_APPEND: [
          process.env.JAVA_OPTS_APPEND ?? '',
          `-Dquarkus.transaction-manager.object-store.directory=${join(dir, 'transaction-logs')}`,
          `-Djava.io.tmpdir=${dir}`,
        ].join(' '),
      },
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      const forced = setTimeout(() => {
        if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
      }, 20_000);
      await exited;
      clearTimeout(forced);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // Ready when the management interface's readiness check answers 200; polled, and given up on when
  // the process exits or the deadline passes.
  const deadline = Date.now() + STARTUP_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`Keycloak exited during start-up:\n${output.slice(-4000)}`);
    }
    const ready = await fetch(`http://127.0.0.1:${managementPort}/health/ready`)
      .then((response) => response.status === 200)
      .catch(() => false);
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Keycloak was not ready after ${STARTUP_DEADLINE_MS} ms:\n${output.slice(-4000)}`);
    }
    await Promise.race([delay(500), exited]);
  }
  const startupMs = Math.round(performance.now() - started);
  // Reported with the test results: what the Keycloak start costs the file.
  console.log(`keycloak: ready in ${startupMs} ms at ${url}`);

  let adminToken: { value: string; until: number } | undefined;
  const token = async () => {
    if (adminToken !== undefined && adminToken.until > Date.now()) return adminToken.value;
    const response = await fetch(`${url}/realms/master/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: 'admin-cli',
        username: adminUser,
        password: adminPassword,
      }),
    });
    const body = (await response.json()) as { access_token?: string; expires_in?: number };
    if (response.status !== 200 || body.access_token === undefined) {
      throw new Error(`Keycloak admin sign-in failed: HTTP ${response.status} ${JSON.stringify(body)}`);
    }
    adminToken = { value: body.access_token, until: Date.now() + ((body.expires_in ?? 60) - 10) * 1000 };
    return body.access_token;
  };
  const adminFetch = async (path: string, init: RequestInit = {}) =>
    fetch(`${url}/admin/realms${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${await token()}`,
        'content-type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
    });

  return {
    url,
    startupMs,
    issuer: (realm) => `${url}/realms/${realm}`,
    async importRealm(realm) {
      const response = await adminFetch('', { method: 'POST', body: JSON.stringify(realm) });
      if (response.status !== 201) {
        throw new Error(`realm import refused: HTTP ${response.status} ${await response.text()}`);
      }
    },
    admin: (realm, path, init) => adminFetch(`/${realm}${path}`, init),
    output: () => output,
    stop,
  };
}

export interface DaguRealmOptions {
  realm: string;
  /** The gateway's resource, `<PUBLIC_URL>/mcp`: the Audience mapper puts it in `aud`. */
  audience: string;
  /** Accounts: user name → password. */
  users: Record<string, string>;
  /** Hosts anonymous registration accepts (Trusted Hosts policy). Default loopback. */
  trustedHosts?: readonly string[];
}

const POLICY = 'org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy';

/** A client scope of the gateway: named in the token's `scope`, with the gateway's audience. */
function gatewayScope(name: string, audience: string): Record<string, unknown> {
  return {
    name,
    protocol: 'openid-connect',
    attributes: { 'include.in.token.scope': 'true', 'display.on.consent.screen': 'true' },
    protocolMappers: [
      {
        name: 'gateway audience',
        protocol: 'openid-connect',
        protocolMapper: 'oidc-audience-mapper',
        config: {
          'included.custom.audience': audience,
          'access.token.claim': 'true',
          'id.token.claim': 'false',
          'introspection.token.claim': 'true',
        },
      },
    ],
  };
}

/**
 * The realm of docs/oauth-keycloak.md as a realm export: `dagu.read` and `dagu.workbook` as realm
 * default *optional* client scopes (in a token only when a client asks for them) with "include in
 * token scope" and an Audience mapper naming the gateway's resource (Keycloak ignores the RFC 8707
 * `resource` parameter the MCP SDKs send), `basic` as the default scope (`sub`, `preferred_username`),
 * and the anonymous-registration policies Keycloak creates for a new realm, with Trusted Hosts opened
 * for loopback redirect URIs. An export that lists client scopes and policies replaces Keycloak's
 * defaults, so the ones the gateway relies on are written out here.
 */
export function daguRealm(options: DaguRealmOptions): Record<string, unknown> {
  const anonymous = (name: string, providerId: string, config: Record<string, string[]>) => ({
    name,
    providerId,
    subType: 'anonymous',
    config,
  });
  return {
    realm: options.realm,
    enabled: true,
    // Plain HTTP on loopback (Keycloak's default, `external`, allows it there too).
    sslRequired: 'external',
    users: Object.entries(options.users).map(([username, password]) => ({
      username,
      enabled: true,
      email: `${username}@example.test`,
      emailVerified: true,
      firstName: username,
      lastName: 'Tester',
      credentials: [{ type: 'password', value: password, temporary: false }],
      // What a user created in the console holds; among its roles, `offline_access` (the SDKs ask for it).
      realmRoles: [`default-roles-${options.realm}`],
    })),
    clientScopes: [
      {
        name: 'basic',
        protocol: 'openid-connect',
        attributes: { 'include.in.token.scope': 'false', 'display.on.consent.screen': 'false' },
        protocolMappers: [
          {
            name: 'sub',
            protocol: 'openid-connect',
            protocolMapper: 'oidc-sub-mapper',
            config: { 'access.token.claim': 'true', 'introspection.token.claim': 'true' },
          },
          {
            name: 'username',
            protocol: 'openid-connect',
            protocolMapper: 'oidc-usermodel-attribute-mapper',
            config: {
              'user.attribute': 'username',
              'claim.name': 'preferred_username',
              'jsonType.label': 'String',
              'access.token.claim': 'true',
              'id.token.claim': 'true',
              'introspection.token.claim': 'true',
              'userinfo.token.claim': 'true',
            },
          },
        ],
      },
      gatewayScope('dagu.read', options.audience),
      gatewayScope('dagu.workbook', options.audience),
    ],
    defaultDefaultClientScopes: ['basic'],
    defaultOptionalClientScopes: ['dagu.read', 'dagu.workbook'],
    components: {
      [POLICY]: [
        anonymous('Trusted Hosts', 'trusted-hosts', {
          'trusted-hosts': [...(options.trustedHosts ?? ['127.0.0.1', 'localhost'])],
          'host-sending-registration-request-must-match': ['true'],
          'client-uris-must-match': ['true'],
        }),
        anonymous('Allowed Client Scopes', 'allowed-client-templates', { 'allow-default-scopes': ['true'] }),
        anonymous('Consent Required', 'consent-required', {}),
        anonymous('Full Scope Disabled', 'scope', {}),
        anonymous('Max Clients Limit', 'max-clients', { 'max-clients': ['200'] }),
      ],
    },
  };
}

const decodeHtml = (text: string) =>
  text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

const attribute = (tag: string, name: string): string | undefined => {
  const match = new RegExp(`\\s${name}="([^"]*)"`, 'i').exec(tag);
  return match === null ? undefined : decodeHtml(match[1]!);
};

/** The first form of a page: where it posts, its named inputs (hidden values included) and buttons. */
function firstForm(
  html: string,
): { action: string; inputs: Map<string, string>; buttons: Set<string> } | undefined {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  const action = form === null ? undefined : attribute(form[1]!, 'action');
  if (form === null || action === undefined) return undefined;
  const inputs = new Map<string, string>();
  for (const [tag] of form[2]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(tag, 'name');
    if (name !== undefined) inputs.set(name, attribute(tag, 'value') ?? '');
  }
  const buttons = new Set<string>();
  for (const [tag] of form[2]!.matchAll(/<button\b[^>]*>/gi)) {
    const name = attribute(tag, 'name');
    if (name !== undefined) buttons.add(name);
  }
  return { action, inputs, buttons };
}

/**
 * The user at Keycloak's HTML pages: fills the login form (its action URL and hidden inputs as the
 * page gives them), accepts the consent page.
 */
export const keycloakPages =
  (user: UserCredentials): PageAnswerer =>
  ({ url, status, text }) => {
    const form = firstForm(text);
    const fields = new URLSearchParams();
    for (const [name, value] of form?.inputs ?? []) fields.set(name, value);
    if (form?.inputs.has('username') && form.inputs.has('password')) {
      fields.set('username', user.login);
      fields.set('password', user.password);
    } else if (form?.buttons.has('accept')) {
      // The consent page's "Yes" button.
      fields.set('accept', '');
    } else {
      const feedback = /class="[^"]*kc-feedback-text[^"]*"[^>]*>([^<]*)</.exec(text)?.[1]?.trim();
      throw new Error(
        `Keycloak stopped at ${url.pathname}: HTTP ${status} ${feedback ?? /<form[\s\S]*?<\/form>/.exec(text)?.[0] ?? text.slice(0, 300)}`,
      );
    }
    return { url: new URL(form.action, url), form: fields };
  };

/**
 * The user agent at Keycloak (keycloakPages): returns what came back to the redirect URI (`code`,
 * `state`, `iss`, or `error`).
 */
export function authorizeWithKeycloak(authorizationUrl: URL, user: UserCredentials): Promise<CallbackParams> {
  return walkToRedirect(authorizationUrl, keycloakPages(user));
}
