import { createHash } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { type Log, silentLog } from '../core/log.ts';

/** A configuration file's problems, one line each; never a line of the file itself (it may hold a key). */
export class ConfigFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
    what = 'file',
  ) {
    super(`invalid ${what} ${file}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigFileError';
  }
}

/**
 * YAML, or JSON for `.json`. A syntax error is reported by its position only: parsers quote the text
 * around it, and an API key file's text is a credential.
 */
export function parseDocument(text: string, file: string, what: string): unknown {
  try {
    return file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    const at = /(?:position|line) \d+(?:,? column \d+)?/.exec((error as Error).message)?.[0];
    throw new ConfigFileError(
      file,
      [`cannot parse: not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}${at ? ` (at ${at})` : ''}`],
      what,
    );
  }
}

/** A schema's refusals as one line per place in the file (`clients.0.client_id: must …`), each once. */
export function schemaProblems(errors: readonly ErrorObject[] | null | undefined): string[] {
  const lines = (errors ?? []).map(
    (error) =>
      `${error.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'file'}: ${error.message ?? 'is invalid'}`,
  );
  return [...new Set(lines)];
}

export function readConfigFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigFileError(
      file,
      [`cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`],
      what,
    );
  }
}

export type ReloadTrigger = 'signal' | 'watch' | 'manual';

export interface WatchedFileOptions {
  log?: Log;
  /** Reload when the file (or its directory, for symlink swaps such as Kubernetes ConfigMaps) changes. Default true. */
  watch?: boolean;
  /** Reload on SIGHUP. Default true. */
  signals?: boolean;
  debounceMs?: number;
  onReload?: (result: 'ok' | 'error') => void;
}

/** How one kind of file is parsed and spoken of in the log. */
export interface FileKind<T> {
  /** `API key file`, `groups file`: in log lines and errors. */
  what: string;
  /** What the file holds (`API keys`): `… loaded`, `… reloaded`. */
  contents: string;
  /** Throws ConfigFileError listing every problem. */
  parse(text: string, file: string): { value: T; warnings: string[] };
  /** Log fields that summarise a loaded value (`{keys: 3}`), never its secrets. */
  summary(value: T): Record<string, unknown>;
}

export interface WatchedFile<T> {
  current(): T;
  /** Re-reads the file. On any problem the value loaded before stays in force and it returns false. */
  reload(trigger?: ReloadTrigger): boolean;
  close(): void;
}

const fingerprintOf = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Loads a configuration file (throws ConfigFileError at start-up) and keeps it current: SIGHUP or a
 * change of the file swaps in the new value atomically, so requests in flight are never dropped, and
 * a broken edit keeps the previous value in force.
 */
export function watchConfigFile<T>(
  file: string,
  kind: FileKind<T>,
  options: WatchedFileOptions = {},
): WatchedFile<T> {
  const log = options.log ?? silentLog;
  const text = readConfigFile(file, kind.what);
  const loaded = kind.parse(text, file);
  let value = loaded.value;
  let fingerprint = fingerprintOf(text);
  for (const warning of loaded.warnings) log.warn({ file }, warning);
  log.info({ file, ...kind.summary(value) }, `${kind.contents} loaded`);

  function reload(trigger: ReloadTrigger = 'manual'): boolean {
    try {
      const next = readConfigFile(file, kind.what);
      const nextFingerprint = fingerprintOf(next);
      if (trigger === 'watch' && nextFingerprint === fingerprint) return true;
      const parsed = kind.parse(next, file);
      value = parsed.value;
      fingerprint = nextFingerprint;
      for (const warning of parsed.warnings) log.warn({ file }, warning);
      log.info({ file, ...kind.summary(value), trigger }, `${kind.contents} reloaded`);
      options.onReload?.('ok');
      return true;
    } catch (error) {
      const problems = error instanceof ConfigFileError ? error.problems : [String(error)];
      log.error(
        { file, trigger, problems, ...kind.summary(value) },
        `${kind.what} reload failed; the ${kind.contents} loaded before stay in force`,
      );
      options.onReload?.('error');
      return false;
    }
  }

  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => reload('watch'), options.debounceMs ?? 200);
    timer.unref();
  };

  let watcher: FSWatcher | undefined;
  if (options.watch ?? true) {
    try {
      // The directory, not the file: editors and ConfigMaps replace the file, which ends a file watch.
      const name = basename(file);
      watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name || changed.startsWith('..')) schedule();
      });
      watcher.on('error', (error) => log.warn({ file, error: error.message }, `${kind.what} watch stopped`));
    } catch (error) {
      log.warn(
        { file, error: (error as Error).message },
        `cannot watch the ${kind.what}; reload it with SIGHUP`,
      );
    }
  }

  const onSignal = () => reload('signal');
  if (options.signals ?? true) process.on('SIGHUP', onSignal);

  return {
    current: () => value,
    reload,
    close() {
      clearTimeout(timer);
      watcher?.close();
      process.off('SIGHUP', onSignal);
    },
  };
}
