/**
 * Encrypted workbook fixtures: officecrypto-tool's agile encryption, and edits of the
 * EncryptionInfo header (a different spinCount, cipher or version) for the reader's checks.
 */
import assert from 'node:assert/strict';
import CFB from 'cfb';
import officeCrypto from 'officecrypto-tool';

/** `plain` (the bytes of an .xlsx) encrypted with agile encryption, as Excel writes it. */
export function encryptAgile(plain: Buffer, password: string): Buffer {
  return officeCrypto.encrypt(plain, { password });
}

/** The encrypted file with its EncryptionInfo XML edited (and optionally its version). */
export function withEncryptionInfo(
  file: Buffer,
  edit: (xml: string) => string,
  version?: [number, number],
): Buffer {
  const container = CFB.read(file, { type: 'buffer' });
  const entry = CFB.find(container, '/EncryptionInfo');
  assert.ok(entry);
  const info = Buffer.from(entry.content);
  const head = Buffer.from(info.subarray(0, 8));
  if (version !== undefined) {
    head.writeUInt16LE(version[0], 0);
    head.writeUInt16LE(version[1], 2);
  }
  entry.content = Buffer.concat([head, Buffer.from(edit(info.subarray(8).toString('utf8')))]);
  entry.size = entry.content.length;
  return Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
}

/**
 * The encrypted file claiming another spinCount. The password no longer derives the right key, so
 * any read of it runs the verifier derivations at that spinCount and ends in the password error:
 * a slow read of known cost.
 */
export const withSpinCount = (file: Buffer, spinCount: number): Buffer =>
  withEncryptionInfo(file, (xml) => xml.replaceAll(/spinCount="\d+"/g, `spinCount="${spinCount}"`));
