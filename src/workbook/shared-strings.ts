/**
 * The shared-string table. It must be held whole (any cell may point anywhere in it), so it is
 * kept compact: all strings as UTF-8 in one growing buffer plus an offset table, about a third of
 * the memory of JS strings, which would also pin the parser's chunks alive (V8 sliced strings).
 * A per-string flag answers "is it blank?" without decoding, which is all the rows past the
 * profile cap need.
 */
import { WorkbookLimitError } from './errors.ts';
import { maxTextRun, parseXmlStream, unescapeXstring } from './xml.ts';

const NON_BLANK = 0;
const WHITESPACE = 1;
const EMPTY = 2;

export class SharedStrings {
  private bytes = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  private ends = new Uint32Array(1024);
  private flags = new Uint8Array(1024);
  private count = 0;
  /** Indices whose text was cut to the cell-text limit. */
  readonly cut = new Set<number>();

  get length(): number {
    return this.count;
  }

  add(text: string, wasCut: boolean): void {
    if (this.count === this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
      const flags = new Uint8Array(this.flags.length * 2);
      flags.set(this.flags);
      this.flags = flags;
    }
    const need = Buffer.byteLength(text, 'utf8');
    if (this.used + need > this.bytes.length) {
      const bytes = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + need));
      this.bytes.copy(bytes, 0, 0, this.used);
      this.bytes = bytes;
    }
    this.used += this.bytes.write(text, this.used, 'utf8');
    this.ends[this.count] = this.used;
    this.flags[this.count] = text.length === 0 ? EMPTY : text.trim() === '' ? WHITESPACE : NON_BLANK;
    if (wasCut) this.cut.add(this.count);
    this.count++;
  }

  get(index: number): string {
    const start = index === 0 ? 0 : this.ends[index - 1]!;
    return this.bytes.toString('utf8', start, this.ends[index]!);
  }

  isEmpty(index: number): boolean {
    return this.flags[index] === EMPTY;
  }

  /** Empty or whitespace only. */
  isBlank(index: number): boolean {
    return this.flags[index] !== NON_BLANK;
  }
}

export interface SharedStringLimits {
  maxSharedStrings: number;
  maxCellChars: number;
}

/**
 * Reads `<sst>`: each `<si>` is its `<t>` text, or the concatenated `<t>` of its rich-text runs;
 * phonetic guides (`<rPh>`) are not part of the value.
 */
export async function readSharedStrings(
  chunks: AsyncIterable<Buffer>,
  part: string,
  limits: SharedStringLimits,
): Promise<SharedStrings> {
  const table = new SharedStrings();
  let inSi = false;
  let inT = false;
  let phonetic = 0;
  let text = '';
  let wasCut = false;
  await parseXmlStream(
    chunks,
    part,
    {
      open(local, tag) {
        if (local === 'si') {
          inSi = true;
          text = '';
          wasCut = false;
        } else if (local === 't') {
          inT = inSi && phonetic === 0;
        } else if (local === 'rPh') {
          phonetic++;
        } else if (local === 'sst') {
          const declared = Number(tag.attributes.uniqueCount ?? '0');
          if (declared > limits.maxSharedStrings)
            throw new WorkbookLimitError(`${declared} shared strings, more than ${limits.maxSharedStrings}`);
        }
      },
      text(chunk) {
        if (!inT || wasCut) return;
        text += chunk;
        if (text.length > limits.maxCellChars) {
          text = text.slice(0, limits.maxCellChars);
          wasCut = true;
        }
      },
      close(local) {
        if (local === 't') inT = false;
        else if (local === 'rPh') phonetic--;
        else if (local === 'si') {
          if (table.length >= limits.maxSharedStrings)
            throw new WorkbookLimitError(`more than ${limits.maxSharedStrings} shared strings`);
          table.add(unescapeXstring(text), wasCut);
          inSi = false;
        }
      },
    },
    { maxRun: maxTextRun(limits.maxCellChars) },
  );
  return table;
}
