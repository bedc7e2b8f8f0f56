import { format } from 'node:util';
import type { Log } from './core/log.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * Notices libraries print on purpose that describe a choice this gateway made: logged at debug, not
 * as warnings an operator would chase. The SDK prints the first whenever a handler answers in JSON;
 * the read tool sends no mid-call notifications, so JSON answers lose nothing.
 */
const EXPECTED_NOTICES: readonly string[] = ["responseMode: 'json' drops mid-call notifications"];

/**
 * Sends what libraries write with `console.*` to the JSON log instead of raw lines on stdout/stderr:
 * every line the process writes stays JSON, and under `--stdio` stdout carries only the protocol.
 * Lines written before the logger exists are kept and written once it is attached.
 */
export function routeConsoleToLog(): { attach(log: Log): void } {
  const pending: Array<[Level, string]> = [];
  let target: Log | undefined;
  const write = (log: Log, level: Level, message: string) => {
    const expected = EXPECTED_NOTICES.some((notice) => message.startsWith(notice));
    log[expected ? 'debug' : level]({ source: 'console' }, message);
  };
  const emit =
    (level: Level) =>
    (...args: unknown[]) => {
      const message = format(...args);
      if (target === undefined) pending.push([level, message]);
      else write(target, level, message);
    };
  console.debug = emit('debug');
  console.log = emit('info');
  console.info = emit('info');
  console.warn = emit('warn');
  console.error = emit('error');
  return {
    attach(log) {
      target = log;
      for (const [level, message] of pending.splice(0)) write(log, level, message);
    },
  };
}
