import { createHash, X509Certificate } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { dirname } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { GatewayConfig } from '../config.ts';

/** Renewal tools write the certificate and the key one after the other: wait for both. */
export const TLS_RELOAD_DEBOUNCE_MS = 250;

/**
 * HTTP/2 with HTTP/1.1 fallback, chosen per connection by ALPN. Fastify's `http2: true` serves the MCP
 * route unchanged: the SDK's node adapter reads `:authority` and writes through the compatibility API,
 * and both SDK clients (undici's HTTP/1.1 by default, or `allowH2`) are tested against it.
 */
export const TLS_HTTP2 = true;

/**
 * Streams one HTTP/2 session may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS; RFC 9113 asks
 * for at least 100): a client's further requests wait in its own queue, not in the gateway's memory.
 */
export const TLS_HTTP2_MAX_STREAMS = 100;

/** What every secure context of the gateway uses besides the certificate pair. */
const CONTEXT_BASE: SecureContextOptions = { minVersion: 'TLSv1.2' };

/** One certificate pair as read from TLS_CERT_FILE and TLS_KEY_FILE, checked to belong together. */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
  /** SHA-256 of both files' bytes: a reload of identical files changes nothing. */
  digest: string;
  /** The leaf certificate's serial number (hex) and SHA-256 fingerprint, for the log. */
  serial: string;
  fingerprint256: string;
  validTo: string;
}

function readSetting(setting: 'TLS_CERT_FILE' | 'TLS_KEY_FILE', file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(`${setting}: cannot read ${file} (${code})`);
  }
}

/** Reads and checks a pair; an error names the setting at fault. The key's bytes are never shown. */
export function loadCertificatePair(files: { certFile: string; keyFile: string }): CertificatePair {
  const cert = readSetting('TLS_CERT_FILE', files.certFile);
  const key = readSetting('TLS_KEY_FILE', files.keyFile);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch {
    throw new Error(`TLS_CERT_FILE: ${files.certFile} holds no PEM certificate`);
  }
  try {
    createSecureContext({ ...CONTEXT_BASE, cert, key });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `TLS_KEY_FILE: ${files.keyFile} is not a usable private key for the certificate in TLS_CERT_FILE (${reason})`,
    );
  }
  return {
    cert,
    key,
    digest: createHash('sha256').update(cert).update('\0').update(key).digest('hex'),
    serial: leaf.serialNumber,
    fingerprint256: leaf.fingerprint256,
    validTo: leaf.validTo,
  };
}

/** The part of a TLS server the reload needs (`https.Server`, `http2.Http2SecureServer`). */
interface SecureContextTarget {
  setSecureContext(options: SecureContextOptions): void;
}

const isSecureContextTarget = (server: unknown): server is SecureContextTarget =>
  typeof (server as Partial<SecureContextTarget> | null)?.setSecureContext === 'function';

export interface GatewayTls {
  /**
   * Spread into `Fastify({...})`: `https` (and `http2`) when TLS is configured, nothing otherwise. Typed
   * as plain server options: the routes use only what Node's HTTP/1.1 and HTTP/2 compatibility
   * request and response objects share, so the app keeps one instance type.
   */
  serverOptions: FastifyServerOptions;
  /** Whether HTTPS is served. */
  enabled: boolean;
  /**
   * Watches the files from now on: a changed, valid pair is used for new connections on `server`
   * (connections already open keep theirs); an invalid one is logged and the current pair kept.
   */
  watch(server: unknown, log: FastifyBaseLogger): void;
  /** Stops watching (idempotent). */
  close(): void;
  /** The pair being served. */
  current(): CertificatePair | undefined;
}

/** Fastify's options for a TLS server on `pair` (HTTP/2 with HTTP/1.1 fallback). */
function secureServerOptions(pair: CertificatePair, headersTimeoutMs: number): FastifyServerOptions {
  const https = {
    ...CONTEXT_BASE,
    cert: pair.cert,
    key: pair.key,
    // The handshake is the first part of a request's headers: bounded alike (Node's default is 120 s).
    handshakeTimeout: headersTimeoutMs,
    ...(TLS_HTTP2 ? { allowHTTP1: true, settings: { maxConcurrentStreams: TLS_HTTP2_MAX_STREAMS } } : {}),
  };
  return { https, ...(TLS_HTTP2 ? { http2: true } : {}) } as FastifyServerOptions;
}

/**
 * Native TLS from TLS_CERT_FILE and TLS_KEY_FILE: read once here (start-up fails with the setting's
 * name when a file is missing or the pair does not match), then reloaded when the files change.
 * Renewal tools (certbot, cert-manager, acme.sh) replace files by rename or swap a symlink, so the
 * folders are watched, not the files, and the contents decide whether anything changed.
 */
export function tlsServerOptions(config: Pick<GatewayConfig, 'tls' | 'http'>): GatewayTls {
  const files = config.tls;
  if (files === undefined) {
    return { serverOptions: {}, enabled: false, watch: () => {}, close: () => {}, current: () => undefined };
  }
  let pair = loadCertificatePair(files);
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let lastFailure: string | undefined;
  let closed = false;

  const serverOptions = secureServerOptions(pair, config.http.headersTimeoutMs);

  function reload(server: SecureContextTarget, log: FastifyBaseLogger): void {
    let next: CertificatePair;
    try {
      next = loadCertificatePair(files!);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== lastFailure) {
        log.warn(
          { reason, serial: pair.serial },
          'TLS certificate reload failed; still serving the current certificate',
        );
      }
      lastFailure = reason;
      return;
    }
    lastFailure = undefined;
    if (next.digest === pair.digest) return;
    server.setSecureContext({ ...CONTEXT_BASE, cert: next.cert, key: next.key });
    pair = next;
    log.info(
      { serial: next.serial, fingerprint256: next.fingerprint256, validTo: next.validTo },
      'TLS certificate reloaded',
    );
  }

  return {
    serverOptions,
    enabled: true,
    current: () => pair,
    watch(server, log) {
      if (!isSecureContextTarget(server)) throw new Error('TLS: the server cannot change its certificate');
      log.info(
        { serial: pair.serial, fingerprint256: pair.fingerprint256, validTo: pair.validTo, http2: TLS_HTTP2 },
        'TLS certificate loaded',
      );
      const schedule = () => {
        if (closed) return;
        clearTimeout(timer);
        timer = setTimeout(() => reload(server, log), TLS_RELOAD_DEBOUNCE_MS);
        timer.unref();
      };
      for (const folder of new Set([dirname(files.certFile), dirname(files.keyFile)])) {
        // Any change in the folder may be ours (a symlink swap such as Kubernetes' `..data` names
        // another entry); the files' contents decide whether the pair changed.
        const watcher = watch(folder, { persistent: false }, schedule);
        watcher.on('error', (error) =>
          log.warn(
            { err: error, folder },
            'TLS certificate folder cannot be watched; renewals need a restart',
          ),
        );
        watchers.push(watcher);
      }
    },
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.splice(0)) watcher.close();
    },
  };
}
