/**
 * Percent-encoding compatible with Go's net/url, byte for byte: Dagu builds its `dagu://` URIs with
 * `url.PathEscape` and parses queries with `url.ParseQuery`, and JavaScript's built-ins differ
 * (encodeURIComponent leaves `!'()*` alone and escapes `$&+:=@`; URLSearchParams accepts `%zz`).
 */

const HEX = '0123456789ABCDEF';
const UTF8 = new TextEncoder();

function byteTable(safe: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const ch of safe) table[ch.charCodeAt(0)] = 1;
  return table;
}

const UNRESERVED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~';
// url.PathEscape also keeps these sub-delimiters that are legal inside one path segment.
const PATH_SAFE = byteTable(`${UNRESERVED}$&+:=@`);
const QUERY_SAFE = byteTable(UNRESERVED);
const PATH_SAFE_RUN = /^[A-Za-z0-9\-_.~$&+:=@]*$/;
const QUERY_SAFE_RUN = /^[A-Za-z0-9\-_.~]*$/;

function escapeBytes(value: string, safe: Uint8Array, spaceAsPlus: boolean): string {
  let out = '';
  for (const byte of UTF8.encode(value)) {
    if (byte < 128 && safe[byte] === 1) out += String.fromCharCode(byte);
    else if (spaceAsPlus && byte === 0x20) out += '+';
    else out += `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}

/** Go `url.PathEscape`: one path segment, every byte outside A–Z a–z 0–9 - _ . ~ $ & + : = @ as %XX. */
export function pathEscape(value: string): string {
  return PATH_SAFE_RUN.test(value) ? value : escapeBytes(value, PATH_SAFE, false);
}

/** Go `url.QueryEscape`: one query key or value, space as `+`, every other reserved byte as %XX. */
export function queryEscape(value: string): string {
  return QUERY_SAFE_RUN.test(value) ? value : escapeBytes(value, QUERY_SAFE, true);
}

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * Strict percent-decoding: `undefined` for a `%` not followed by two hex digits, or for escapes
 * that do not form valid UTF-8 (a JavaScript string cannot carry such bytes faithfully).
 * With `plusAsSpace` (query components) a literal `+` means a space, as in Go's QueryUnescape.
 */
export function percentDecode(value: string, plusAsSpace: boolean): string | undefined {
  const text = plusAsSpace && value.includes('+') ? value.replaceAll('+', ' ') : value;
  if (!text.includes('%')) return text;
  if (BAD_ESCAPE.test(text)) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
