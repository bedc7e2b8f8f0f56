/**
 * A fast tokenizer for the rows past the profile cap. Those rows are only counted (where the block
 * ends, which rows and columns hold something), yet they are most of a large sheet, and saxes'
 * character-by-character state machine would spend most of the read on them. This scanner works on
 * the raw UTF-8 bytes, jumps from `<` to `<` with indexOf, and hands the same element events to the
 * same RowAssembler; text is decoded only where the assembler collects it.
 *
 * It still checks what matters for well-formed input: end tags must match start tags, entities
 * must be the predefined or numeric ones, and a DOCTYPE is refused. Comments, processing
 * instructions and CDATA sections are understood. Every value that reaches the profile itself was
 * decoded by saxes: this scanner only starts once the profile is full.
 */

import { columnOfRef, MAX_COLUMNS, MAX_ROWS } from './cells.ts';
import { WorkbookFormatError } from './errors.ts';
import { localName } from './xml.ts';

/** What the skimmer drives (the RowAssembler). */
export interface SkimHandler {
  readonly done: boolean;
  /** Whether text is being collected now (inside `<v>` or an inline `<t>`). */
  readonly collecting: boolean;
  /** Whether only the presence of a value matters now (inside a `<v>` whose value is not needed). */
  readonly sensing: boolean;
  /** The whole text of the sensed `<v>` is a plain number; false: hand over the text instead. */
  onNumber(): boolean;
  openRow(row: number | null, hidden: boolean): void;
  openCell(col: number | null, ref: string | undefined, type: string | undefined, style: number): void;
  open(local: string, name: string): void;
  close(local: string): void;
  onText(text: string): void;
}

const ENTITY = /&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot|apos))?;?/g;
const NAMED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the predefined and numeric entities; anything else after `&` is malformed (as saxes says). */
export function decodeEntities(text: string, part: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    ENTITY,
    (match, hex: string | undefined, dec: string | undefined, named: string | undefined) => {
      if (!match.endsWith(';') || (hex === undefined && dec === undefined && named === undefined))
        throw new WorkbookFormatError(`malformed XML in ${part}`);
      if (named !== undefined) return NAMED[named]!;
      const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(dec);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
        throw new WorkbookFormatError(`malformed XML in ${part}`);
      return String.fromCodePoint(code);
    },
  );
}

const COMMENT = Buffer.from('<!--');
const CDATA = Buffer.from('<![CDATA[');
const HIDDEN = Buffer.from('hidden');
const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
const isNameEnd = (c: number) =>
  c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === SLASH || c === GT;

/** The element names of `<sheetData>` as shared strings, so the hot path allocates none. */
function elementName(bytes: Buffer, start: number, end: number): string {
  const length = end - start;
  const b0 = bytes[start];
  if (length === 1) {
    if (b0 === 0x63) return 'c';
    if (b0 === 0x76) return 'v';
    if (b0 === 0x74) return 't';
    if (b0 === 0x66) return 'f';
  } else if (length === 3 && b0 === 0x72 && bytes[start + 1] === 0x6f && bytes[start + 2] === 0x77) {
    return 'row';
  } else if (length === 2 && b0 === 0x69 && bytes[start + 1] === 0x73) {
    return 'is';
  }
  return bytes.toString('utf8', start, end);
}

export class SheetSkimmer {
  /** Unconsumed tail of the previous chunk: markup or text cut by the chunk boundary. */
  private carry: Buffer | undefined;
  private readonly stack: string[];

  constructor(
    private readonly part: string,
    private readonly handler: SkimHandler,
    openElements: readonly string[],
  ) {
    this.stack = [...openElements];
  }

  private malformed(): WorkbookFormatError {
    return new WorkbookFormatError(`malformed XML in ${this.part}`);
  }

  write(chunk: Buffer): void {
    let bytes = chunk;
    let from = 0;
    if (this.carry !== undefined) {
      // Finish the carried piece with the chunk up to its first `<` (a cut tag cannot reach past it),
      // rather than copying the whole chunk; a cut comment or CDATA section may, and then it is copied.
      const next = chunk.indexOf(LT);
      const head = Buffer.concat([this.carry, next === -1 ? chunk : chunk.subarray(0, next)]);
      this.carry = undefined;
      if (next === -1) {
        this.scan(head, 0);
        return;
      }
      this.scan(head, 0);
      if (this.carry !== undefined) {
        bytes = Buffer.concat([this.carry, chunk.subarray(next)]);
        this.carry = undefined;
      } else {
        from = next;
      }
    }
    this.scan(bytes, from);
  }

  /** Tokenizes `bytes` from `pos`; whatever is cut off at the end is kept in `carry`. */
  private scan(bytes: Buffer, pos: number): void {
    const handler = this.handler;
    const n = bytes.length;
    while (pos < n && !handler.done) {
      // Gaps between tags are short: a plain loop beats Buffer#indexOf's call overhead here.
      let lt = pos;
      while (lt < n && bytes[lt] !== LT) lt++;
      if (lt === n) {
        // Text running into the next chunk (it may end in a split character or entity).
        this.carry = Buffer.from(bytes.subarray(pos));
        return;
      }
      if (lt > pos) {
        // A sensed value that is all of its `<v>` (an end tag follows) and a plain number is only
        // reported; any other text is decoded, so the assembler decides exactly as it does before the cap.
        if (handler.collecting) handler.onText(decodeEntities(bytes.toString('utf8', pos, lt), this.part));
        else if (
          handler.sensing &&
          !(bytes[lt + 1] === SLASH && isPlainNumber(bytes, pos, lt) && handler.onNumber())
        )
          handler.onText(decodeEntities(bytes.toString('utf8', pos, lt), this.part));
      }
      const next = this.markup(bytes, lt);
      if (next === -1) {
        this.carry = Buffer.from(bytes.subarray(lt));
        return;
      }
      pos = next;
    }
  }

  /** Checks that the input ended where it may: nothing half-read. */
  end(): void {
    if (this.handler.done) return;
    if (this.carry?.some((c) => !isSpace(c)) || this.stack.length > 0) throw this.malformed();
  }

  /** Handles the markup at `lt`; returns the index after it, or -1 when it continues in the next chunk. */
  private markup(bytes: Buffer, lt: number): number {
    const n = bytes.length;
    if (lt + 1 >= n) return -1;
    const c1 = bytes[lt + 1];
    if (c1 === SLASH) return this.endTag(bytes, lt);
    if (c1 === 0x21) {
      if (n - lt < 9) return -1;
      if (bytes.compare(COMMENT, 0, COMMENT.length, lt, lt + COMMENT.length) === 0) {
        const e = bytes.indexOf('-->', lt + 4);
        return e === -1 ? -1 : e + 3;
      }
      if (bytes.compare(CDATA, 0, CDATA.length, lt, lt + CDATA.length) === 0) {
        const e = bytes.indexOf(']]>', lt + 9);
        if (e === -1) return -1;
        if (this.handler.collecting || this.handler.sensing)
          this.handler.onText(bytes.toString('utf8', lt + 9, e));
        return e + 3;
      }
      throw this.malformed();
    }
    if (c1 === 0x3f) {
      const e = bytes.indexOf('?>', lt + 2);
      return e === -1 ? -1 : e + 2;
    }
    return this.startTag(bytes, lt);
  }

  private endTag(bytes: Buffer, lt: number): number {
    const n = bytes.length;
    let gt = lt + 2;
    while (gt < n && bytes[gt] !== GT) gt++;
    if (gt === n) return -1;
    let end = gt;
    while (end > lt + 2 && isSpace(bytes[end - 1]!)) end--;
    const name = elementName(bytes, lt + 2, end);
    if (this.stack.pop() !== name) throw this.malformed();
    this.handler.close(localName(name));
    return gt + 1;
  }

  private startTag(bytes: Buffer, lt: number): number {
    const n = bytes.length;
    let i = lt + 1;
    while (i < n && !isNameEnd(bytes[i]!)) i++;
    if (i >= n) return -1;
    if (i === lt + 1) throw this.malformed();
    const name = elementName(bytes, lt + 1, i);
    const local = localName(name);
    const isCell = local === 'c';
    const isRow = local === 'row';
    // Only what the assembler needs past the cap: a row's number and hidden flag, a cell's column and type.
    let ref: number | null = null;
    let type: string | undefined;
    let hidden = false;
    for (;;) {
      while (i < n && isSpace(bytes[i]!)) i++;
      if (i >= n) return -1;
      const c = bytes[i];
      if (c === GT || c === SLASH) {
        const selfClosing = c === SLASH;
        if (selfClosing) {
          if (i + 1 >= n) return -1;
          if (bytes[i + 1] !== GT) throw this.malformed();
        }
        if (isCell) this.handler.openCell(ref, undefined, type, 0);
        else if (isRow) this.handler.openRow(ref, hidden);
        else this.handler.open(local, name);
        if (selfClosing) this.handler.close(local);
        else this.stack.push(name);
        return selfClosing ? i + 2 : i + 1;
      }
      const nameStart = i;
      while (i < n) {
        const a = bytes[i]!;
        if (a === 0x3d || isSpace(a)) break;
        i++;
      }
      const nameLength = i - nameStart;
      while (i < n && isSpace(bytes[i]!)) i++;
      if (i >= n) return -1;
      if (bytes[i] !== 0x3d || nameLength === 0) throw this.malformed();
      i++;
      while (i < n && isSpace(bytes[i]!)) i++;
      if (i >= n) return -1;
      const quote = bytes[i]!;
      if (quote !== 0x22 && quote !== 0x27) throw this.malformed();
      let close = i + 1;
      while (close < n && bytes[close] !== quote) close++;
      if (close === n) return -1;
      if (isCell || isRow) {
        const a = bytes[nameStart];
        if (nameLength === 1 && a === 0x72)
          ref = isCell ? this.column(bytes, i + 1, close) : this.row(bytes, i + 1, close);
        else if (nameLength === 1 && a === 0x74) type = cellType(bytes, i + 1, close, this.part);
        else if (nameLength === 6 && bytes.compare(HIDDEN, 0, 6, nameStart, nameStart + 6) === 0) {
          const flag = decodeEntities(bytes.toString('utf8', i + 1, close), this.part);
          hidden = flag === '1' || flag === 'true';
        }
      }
      i = close + 1;
    }
  }

  /** The 0-based column of an `r` such as `AB12`, read from the bytes; -1 when it is none. */
  private column(bytes: Buffer, start: number, end: number): number {
    let col = 0;
    let i = start;
    for (; i < end; i++) {
      let c = bytes[i]!;
      if (c >= 0x61 && c <= 0x7a) c -= 0x20;
      if (c < 0x41 || c > 0x5a) break;
      col = col * 26 + (c - 0x40);
      if (col > MAX_COLUMNS) return -1;
    }
    if (i < end && bytes[i] === 0x26)
      return columnOfRef(decodeEntities(bytes.toString('utf8', start, end), this.part));
    return i === start ? -1 : col - 1;
  }

  /** A row's `r`, read from the bytes; NaN when it is no number. */
  private row(bytes: Buffer, start: number, end: number): number {
    let row = 0;
    for (let i = start; i < end; i++) {
      const c = bytes[i]!;
      if (c < 0x30 || c > 0x39 || row > MAX_ROWS)
        return Number(decodeEntities(bytes.toString('utf8', start, end), this.part));
      row = row * 10 + (c - 0x30);
    }
    return end === start ? Number.NaN : row;
  }
}

/**
 * Whether bytes `start` to `end` are `-?digits(.digits)?`, at most 21 characters after the sign:
 * text that Number() reads as a finite number (all that a sensed value past the cap needs to know).
 */
function isPlainNumber(bytes: Buffer, start: number, end: number): boolean {
  let i = start;
  if (bytes[i] === 0x2d) i++;
  if (end - i > 21) return false;
  const digitsFrom = i;
  while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) i++;
  if (i === digitsFrom) return false;
  if (i === end) return true;
  if (bytes[i] !== 0x2e) return false;
  i++;
  const fractionFrom = i;
  while (i < end && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) i++;
  return i === end && i > fractionFrom;
}

/** A cell's `t`, as a shared string for the usual values. */
function cellType(bytes: Buffer, start: number, end: number, part: string): string {
  const length = end - start;
  if (length === 1) {
    const b = bytes[start];
    if (b === 0x73) return 's';
    if (b === 0x6e) return 'n';
    if (b === 0x62) return 'b';
    if (b === 0x65) return 'e';
    if (b === 0x64) return 'd';
  }
  return decodeEntities(bytes.toString('utf8', start, end), part);
}
