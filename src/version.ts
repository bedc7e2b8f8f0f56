import { readFileSync } from 'node:fs';

/** The gateway's version, from package.json (read once). */
export const GATEWAY_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
