/**
 * saxes with the settings every part uses. saxes is non-validating and treats unknown entities as
 * errors, so entity expansion and external entities cannot happen; a DOCTYPE is refused outright
 * (as Apache POI does for OOXML parts). Elements are matched by local name: writers such as the
 * Open XML SDK prefix every element (`<x:row>`).
 */
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
 * Parses a part from text chunks; `stop()` returning true ends the parse early (the rest is not
 * needed). saxes gathers a whole text node, attribute value or comment before handing it over, so
 * a run of `maxRun` characters without a `<` (one 400 MB cell, say) is refused before it is built.
 * Checking only across chunk boundaries suffices: a run longer than a chunk spans one.
 */
export async function parseXmlChunks(
  chunks: AsyncIterable<string>,
  part: string,
  handlers: XmlHandlers,
  options: { maxRun: number; stop?: () => boolean },
): Promise<void> {
  const parser = createParser(part, handlers);
  const { maxRun, stop } = options;
  let run = 0;
  try {
    for await (const chunk of chunks) {
      const first = chunk.indexOf('<');
      if (first === -1) run += chunk.length;
      else {
        run += first;
        if (run <= maxRun) run = chunk.length - chunk.lastIndexOf('<') - 1;
      }
      if (run > maxRun)
        throw new WorkbookLimitError(`${part} holds a text or tag longer than ${maxRun} characters`);
      parser.write(chunk);
      if (stop?.()) return;
    }
    parser.close();
  } catch (error) {
    throw xmlError(error, part);
  }
}

/** The longest markup-free run a part may hold: room for any cell text the limit keeps, entity-encoded. */
export function maxTextRun(maxCellChars: number): number {
  return Math.max(maxCellChars * 16, 1024 * 1024);
}
