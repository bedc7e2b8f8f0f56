/**
 * The zip container on yauzl, which reads the central directory (no forward-only local-header
 * parsing). Declared sizes are checked against the caps before a byte is inflated, and a part that
 * inflates past the size it declares fails at that chunk (a lying header costs one chunk).
 */
import fs from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import yauzl from 'yauzl';
import { WorkbookFormatError, WorkbookLimitError } from './errors.ts';
import { PartDecoder } from './xml.ts';

export interface ZipLimits {
  maxZipEntries: number;
}

/** Part names are case-insensitive in OPC; lookups use the lower-cased name without a leading `/`. */
export function partKey(name: string): string {
  return name.replace(/^\/+/, '').toLowerCase();
}

/** A short cause for yauzl and zlib failures, without echoing file content. */
function zipCause(error: unknown, part?: string): WorkbookFormatError {
  const message = error instanceof Error ? error.message : String(error);
  const where = part === undefined ? '' : ` ${part}`;
  if (/end of central directory/i.test(message))
    return new WorkbookFormatError('not a zip archive or truncated');
  if (/too many bytes|not enough bytes|size mismatch/i.test(message))
    return new WorkbookFormatError(`zip entry${where} does not match its declared size`);
  if (/encrypt/i.test(message)) return new WorkbookFormatError(`zip entry${where} is encrypted`);
  if (/compression method/i.test(message))
    return new WorkbookFormatError(`zip entry${where} uses an unsupported compression method`);
  return new WorkbookFormatError(`corrupt zip archive${where ? ` at${where}` : ''}`);
}

export class ZipPackage {
  private constructor(
    private readonly zip: yauzl.ZipFile,
    private readonly entries: ReadonlyMap<string, yauzl.Entry>,
  ) {}

  /** Takes ownership of `fd`: closed with the package, or at once when the file is no readable zip. */
  static async fromFd(fd: number, limits: ZipLimits): Promise<ZipPackage> {
    return ZipPackage.load(async () => {
      try {
        return await yauzl.fromFdPromise(fd, ZIP_OPTIONS);
      } catch (error) {
        // yauzl closes the descriptor only through a ZipFile it managed to create.
        fs.close(fd, () => undefined);
        throw error;
      }
    }, limits);
  }

  static async fromBuffer(buffer: Buffer, limits: ZipLimits): Promise<ZipPackage> {
    return ZipPackage.load(() => yauzl.fromBufferPromise(buffer, ZIP_OPTIONS), limits);
  }

  private static async load(open: () => Promise<yauzl.ZipFile>, limits: ZipLimits): Promise<ZipPackage> {
    let zip: yauzl.ZipFile;
    try {
      zip = await open();
    } catch (error) {
      throw zipCause(error);
    }
    if (zip.entryCount > limits.maxZipEntries) {
      zip.close();
      throw new WorkbookLimitError(`${zip.entryCount} zip entries, more than ${limits.maxZipEntries}`);
    }
    const entries = new Map<string, yauzl.Entry>();
    try {
      for await (const entry of zip.eachEntry()) {
        const key = partKey(entry.fileName);
        if (!entries.has(key)) entries.set(key, entry);
      }
    } catch (error) {
      zip.close();
      throw zipCause(error);
    }
    return new ZipPackage(zip, entries);
  }

  has(part: string): boolean {
    return this.entries.has(partKey(part));
  }

  /** The part as text, refused before inflating when it declares more than `maxBytes`. */
  async readText(part: string, maxBytes: number): Promise<string> {
    const decoder = new PartDecoder(part);
    let text = '';
    for await (const chunk of this.chunks(part, maxBytes)) text += decoder.write(chunk);
    return text + decoder.end();
  }

  /**
   * The part's inflated bytes, chunk by chunk; refused before inflating when it declares more than
   * `maxBytes`, and failed by yauzl as soon as it inflates past what it declares.
   */
  async *chunks(part: string, maxBytes: number): AsyncGenerator<Buffer> {
    const entry = this.entries.get(partKey(part));
    if (entry === undefined) throw new WorkbookFormatError(`part ${part} is missing`);
    if (entry.uncompressedSize > maxBytes)
      throw new WorkbookLimitError(
        `${part} expands to ${entry.uncompressedSize} bytes, more than ${maxBytes}`,
      );
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
      throw new WorkbookFormatError(`zip entry ${part} uses an unsupported compression method`);
    let raw: Readable;
    try {
      raw = await this.zip.openReadStreamPromise(entry, { decodeFileData: false });
    } catch (error) {
      throw zipCause(error, part);
    }
    // Inflated here rather than by yauzl: larger chunks halve the per-chunk overhead on big sheets.
    // The size check yauzl would make (`validateEntrySizes`) is made below instead.
    const stream =
      entry.compressionMethod === 8
        ? pipeline(raw, createInflateRaw({ chunkSize: INFLATE_CHUNK }), () => undefined)
        : raw;
    let total = 0;
    try {
      for await (const chunk of stream) {
        total += (chunk as Buffer).length;
        if (total > entry.uncompressedSize)
          throw new WorkbookFormatError(`zip entry ${part} does not match its declared size`);
        yield chunk as Buffer;
      }
      if (total !== entry.uncompressedSize)
        throw new WorkbookFormatError(`zip entry ${part} does not match its declared size`);
    } catch (error) {
      if (error instanceof WorkbookFormatError || error instanceof WorkbookLimitError) throw error;
      throw zipCause(error, part);
    } finally {
      stream.destroy();
      raw.destroy();
    }
  }

  close(): void {
    this.zip.close();
  }
}

/** Inflated bytes per chunk (zlib's default is 16 KB). */
const INFLATE_CHUNK = 64 * 1024;

const ZIP_OPTIONS: yauzl.Options = {
  lazyEntries: true,
  autoClose: false,
  validateEntrySizes: true,
  decodeStrings: true,
  strictFileNames: false,
};
