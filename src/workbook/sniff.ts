/** What a file is, from its first bytes: a zip (an .xlsx), an OLE/CFB container, or something else. */

export type FileKind = 'zip' | 'cfb' | 'empty' | 'other';

const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** Bytes `sniff` needs. */
export const SNIFF_BYTES = 8;

export function sniff(head: Buffer): FileKind {
  if (head.length === 0) return 'empty';
  // A local file header, or the end record of an empty zip.
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b) {
    if ((head[2] === 0x03 && head[3] === 0x04) || (head[2] === 0x05 && head[3] === 0x06)) return 'zip';
  }
  if (head.length >= 8 && head.subarray(0, 8).equals(CFB_MAGIC)) return 'cfb';
  return 'other';
}
