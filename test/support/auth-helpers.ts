import { createHash, createHmac, type KeyObject, sign } from 'node:crypto';
import type { Log } from '../../src/core/log.ts';

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Signs a JWT with node:crypto alone, so the tests do not trust the library they test. */
export function signJwt(
  payload: Record<string, unknown>,
  options: { alg: 'HS256' | 'RS256' | 'ES256' | 'none'; key?: string | KeyObject; kid?: string },
): string {
  const header: Record<string, unknown> = { alg: options.alg, typ: 'JWT' };
  if (options.kid !== undefined) header.kid = options.kid;
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  let signature: Buffer;
  switch (options.alg) {
    case 'none':
      signature = Buffer.alloc(0);
      break;
    case 'HS256':
      signature = createHmac('sha256', options.key as string)
        .update(input)
        .digest();
      break;
    case 'RS256':
      signature = sign('sha256', Buffer.from(input), options.key as KeyObject);
      break;
    case 'ES256':
      signature = sign('sha256', Buffer.from(input), {
        key: options.key as KeyObject,
        dsaEncoding: 'ieee-p1363',
      });
      break;
  }
  return `${input}.${b64url(signature)}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

export { tempDir, writeTemp } from './temp.ts';

export interface RecordedLog extends Log {
  lines: Array<{ level: string; fields: Record<string, unknown>; message: string }>;
  text(): string;
}

/** A logger that keeps every line, to check what was (and was not) logged. */
export function recordingLog(): RecordedLog {
  const lines: RecordedLog['lines'] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, fields, message });
  };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () =>
      lines.map((line) => `${line.level} ${line.message} ${JSON.stringify(line.fields)}`).join('\n'),
  };
}

/** Polls until `check` holds (file watchers and timers are asynchronous). */
export async function eventually(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
