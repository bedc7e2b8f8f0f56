/**
 * The setup the end-to-end files that watch what reaches Dagu share: the real gateway (with a captured
 * audit and application log) in front of a Dagu, through a recording proxy that can hold requests.
 * One call registers the `before` and `after` hooks of the surrounding `describe` (or of the file).
 */
import { after, before } from 'node:test';
import {
  type CapturedGateway,
  type GatedProxy,
  startCapturedGateway,
  startGatedProxy,
} from './auth-fixtures.ts';
import { getTestDagu, type TestDagu } from './dagu.ts';
import { connectModern, type TestClient } from './gateway.ts';

/** Where a Dagu answers: the shared test Dagu, or one a file starts itself. */
export interface DaguAddress {
  url: string;
  apiBase: string;
}

export interface GatewayOnDaguSetup {
  dagu: DaguAddress;
  /** Settings beside DAGU_URL (the proxy) and DAGU_API_BASE (the Dagu's). */
  env?: Record<string, string>;
}

function started<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`the ${name} starts in the before hook; read it in a test`);
  return value;
}

export interface GatewayOnDagu {
  /** Started in the `before` hook; reading it earlier throws. */
  readonly proxy: GatedProxy;
  readonly gateway: CapturedGateway;
}

/**
 * Starts, in a `before` hook, the proxy in front of `setup().dagu` and the gateway on the proxy, and
 * stops them in an `after` hook (requests still held are released first). `setup` runs inside that
 * `before` hook: it may get the Dagu itself (at a file's top level it must: on Node 20 a file's own
 * `before` hooks do not wait for each other), name one an enclosing level's hook started, and write
 * the files its settings point at.
 */
export function gatewayOnDagu(
  setup: () => GatewayOnDaguSetup | Promise<GatewayOnDaguSetup>,
  options: { logLevel?: string } = {},
): GatewayOnDagu {
  let proxy: GatedProxy | undefined;
  let gateway: CapturedGateway | undefined;
  before(async () => {
    const { dagu, env = {} } = await setup();
    proxy = await startGatedProxy(dagu.url);
    gateway = await startCapturedGateway(
      { DAGU_URL: proxy.url, DAGU_API_BASE: dagu.apiBase, ...env },
      options,
    );
  });
  after(async () => {
    proxy?.release();
    await gateway?.close();
    await proxy?.close();
  });
  return {
    get proxy() {
      return started(proxy, 'proxy');
    },
    get gateway() {
      return started(gateway, 'gateway');
    },
  };
}

export interface GatewayOnTestDagu {
  /** The shared test Dagu (test/support/dagu.ts); got in the `before` hook. */
  readonly dagu: TestDagu;
  readonly gateway: CapturedGateway;
  /** A modern MCP client connected to the gateway (with `{ client: true }`). */
  readonly client: TestClient;
}

/**
 * The gateway straight on the shared test Dagu, in `before` and `after` hooks of the surrounding
 * `describe` (or of the file), and with `client: true` a modern MCP client connected to it. `env`
 * runs in the `before` hook: settings beside DAGU_URL and DAGU_API_BASE, and the files they point at.
 * Everything starts in one hook: on Node 20 a file's own `before` hooks do not wait for each other.
 */
export function gatewayOnTestDagu(
  env: () => Record<string, string> = () => ({}),
  options: { logLevel?: string; client?: boolean } = {},
): GatewayOnTestDagu {
  let dagu: TestDagu | undefined;
  let gateway: CapturedGateway | undefined;
  let client: TestClient | undefined;
  before(async () => {
    dagu = await getTestDagu();
    gateway = await startCapturedGateway(
      { DAGU_URL: dagu.url, DAGU_API_BASE: dagu.apiBase, ...env() },
      options.logLevel === undefined ? {} : { logLevel: options.logLevel },
    );
    if (options.client === true) client = await connectModern(gateway.mcpUrl);
  });
  after(async () => {
    await client?.close();
    await gateway?.close();
    await dagu?.stop();
  });
  return {
    get dagu() {
      return started(dagu, 'test Dagu');
    },
    get gateway() {
      return started(gateway, 'gateway');
    },
    get client() {
      return started(client, 'client (ask for it with `client: true`)');
    },
  };
}
