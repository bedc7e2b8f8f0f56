/**
 * saxes with the settings every part uses. saxes is non-validating and treats unknown entities as
 * errors, so entity expansion and external entities cannot happen; a DOCTYPE is refused outright
 * (as Apache POI does for OOXML parts). Elements are matched by local name: writers such as the
 * Open XML SDK prefix every element (`<x:row>`).
 */
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { WorkbookFormatError, WorkbookLimitError } from './errors.ts';

export type Tag = SaxesTagPlain;

export interface XmlHandlers {
  open?: (local: string, tag: Tag) => void;
  close?: (local: string) => void;
  text?: (text: string) => void;
}

export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** The value of an attribute matched by local name (`r:id` and `id` with any prefix). */
export function attr(tag: Tag, local: string): string | undefined {
  const direct = tag.attributes[local];
  if (direct !== undefined) return direct;
  for (const key in tag.attributes) if (localName(key) === local) return tag.attributes[key];
  return undefined;
}

/** A prefixed attribute such as `r:id`: the relationship id of a sheet or table part. */
export function prefixedAttr(tag: Tag, local: string): string | undefined {
  for (const key in tag.attributes) {
    if (key.includes(':') && localName(key) === local) return tag.attributes[key];
  }
  return undefined;
}

/** Excel escapes characters XML cannot carry as `_xHHHH_` (ECMA-376 Part 1, 22.9.2.19 ST_Xstring). */
export function unescapeXstring(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

type PlainOptions = { xmlns: false; position: false };

export function createParser(part: string, handlers: XmlHandlers): SaxesParser<PlainOptions> {
  const parser = new SaxesParser<PlainOptions>({ xmlns: false, position: false });
  parser.on('doctype', () => {
    throw new WorkbookFormatError(`${part} declares a DOCTYPE`);
  });
  const { open, close, text } = handlers;
  if (open) parser.on('opentag', (tag) => open(localName(tag.name), tag));
  if (close) parser.on('closetag', (tag) => close(localName(tag.name)));
  if (text) {
    parser.on('text', text);
    parser.on('cdata', text);
  }
  return parser;
}

/** Marks saxes' own well-formedness errors as format errors of this part. */
export function xmlError(error: unknown, part: string): unknown {
  if (!(error instanceof Error)) return error;
  if (error.constructor === Error) return new WorkbookFormatError(`malformed XML in ${part}`);
  // V8's "Invalid string length": a text node beyond what a string can hold.
  if (error instanceof RangeError) return new WorkbookLimitError(`${part} holds a text too long to read`);
  return error;
}

/** Parses a whole (small) part held as text. */
export function parseXml(text: string, part: string, handlers: XmlHandlers): void {
  const parser = createParser(part, handlers);
  try {
    parser.write(text).close();
  } catch (error) {
    throw xmlError(error, part);
  }
}

/**
 * Decodes a part's bytes: UTF-8 (with or without a byte-order mark) or UTF-16LE with its mark.
 * A character split between chunks is joined by the decoder.
 */
export class PartDecoder {
  private decoder: StringDecoder | undefined;
  /** Known after the first chunk: whether the part is UTF-8 (byte offsets then match ASCII markup). */
  utf8 = true;

  constructor(private readonly part: string) {}

  write(bytes: Buffer): string {
    if (this.decoder === undefined) {
      if (bytes[0] === 0xfe && bytes[1] === 0xff)
        throw new WorkbookFormatError(`${this.part} is UTF-16BE, which is not supported`);
      this.utf8 = !(bytes[0] === 0xff && bytes[1] === 0xfe);
      this.decoder = new StringDecoder(this.utf8 ? 'utf8' : 'utf16le');
    }
    return this.decoder.write(bytes);
  }

  end(): string {
    return this.decoder?.end() ?? '';
  }
}

/**
 * Watches the raw bytes of a streamed part, chunk by chunk:
 * - saxes gathers a whole text node, attribute value or comment before handing it over, so a run
 *   of `maxRun` bytes without a `<` (one 400 MB cell, say) is refused before it is built.
 *   Checking across chunk boundaries suffices: a run longer than a chunk spans one.
 * - `plain` stays true while the part has shown no comment, CDATA section, processing instruction
 *   or DOCTYPE after its XML declaration (the sheet stream relies on it to hand over to the skimmer).
 * Both hold for UTF-8; a UTF-16 part is never handed over, and its runs count double.
 */
export class MarkupGuard {
  plain = true;
  private run = 0;
  private started = false;
  private endsWithLt = false;

  constructor(
    private readonly part: string,
    private readonly maxRun: number,
  ) {}

  /** `watch` false: `plain` is no longer needed (saves two scans of the chunk). */
  check(chunk: Buffer, watch = true): void {
    const first = chunk.indexOf(LT);
    if (first === -1) this.run += chunk.length;
    else {
      this.run += first;
      if (this.run <= this.maxRun) this.run = chunk.length - chunk.lastIndexOf(LT) - 1;
    }
    if (this.run > this.maxRun)
      throw new WorkbookLimitError(`${this.part} holds a text or tag longer than ${this.maxRun} bytes`);
    if (this.plain && watch) {
      let from = 0;
      if (!this.started) {
        this.started = true;
        const at = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
        if (chunk.indexOf('<?xml', at) === at) {
          const end = chunk.indexOf('?>', at);
          from = end === -1 ? chunk.length : end + 2;
        }
      }
      const c0 = chunk[0];
      if (
        chunk.indexOf('<!', from) !== -1 ||
        chunk.indexOf('<?', from) !== -1 ||
        (this.endsWithLt && (c0 === 0x21 || c0 === 0x3f))
      )
        this.plain = false;
    }
    this.endsWithLt = chunk[chunk.length - 1] === LT;
  }
}

const LT = 0x3c;

/** Parses a streamed part (raw bytes) under a MarkupGuard. */
export async function parseXmlStream(
  chunks: AsyncIterable<Buffer>,
  part: string,
  handlers: XmlHandlers,
  options: { maxRun: number },
): Promise<void> {
  const parser = createParser(part, handlers);
  const guard = new MarkupGuard(part, options.maxRun);
  const decoder = new PartDecoder(part);
  try {
    for await (const chunk of chunks) {
      guard.check(chunk);
      parser.write(decoder.write(chunk));
    }
    parser.write(decoder.end()).close();
  } catch (error) {
    throw xmlError(error, part);
  }
}

/** The longest markup-free run (bytes) a part may hold: room for any cell text the limit keeps, entity-encoded. */
export function maxTextRun(maxCellChars: number): number {
  return Math.max(maxCellChars * 16, 1024 * 1024);
}
