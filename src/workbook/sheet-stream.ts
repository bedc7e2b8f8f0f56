/**
 * Streams one worksheet part into a SheetProfiler, once, in constant memory. saxes parses the
 * sheet until the profile is full; from the next row boundary on, the skimmer counts the rest
 * (see sheet-skim.ts for why). The hand-over needs a point where saxes is provably between rows:
 * right after a `</row>`, in a UTF-8 part with no comment, CDATA section or processing instruction
 * so far (the only places a literal `</row>` could hide). Otherwise saxes simply reads to the end.
 */
import { RowAssembler, type SheetContext } from './row-assembler.ts';
import type { SheetProfiler } from './sheet-profile.ts';
import { SheetSkimmer } from './sheet-skim.ts';
import { createParser, MarkupGuard, maxTextRun, PartDecoder, xmlError } from './xml.ts';

export { type SheetContext, SheetDataError } from './row-assembler.ts';

const ROW_END = Buffer.from('row>');

/** The index just after the last `</row>` (or `</x:row>`) in `bytes`, or -1. */
export function lastRowEnd(bytes: Buffer): number {
  let at = bytes.lastIndexOf(ROW_END);
  while (at > 1) {
    let i = at - 1;
    if (bytes[i] === 0x3a) {
      // A prefixed name such as `</x:row>`: step back over the prefix.
      i--;
      while (i > 0 && /[A-Za-z0-9_.-]/.test(String.fromCharCode(bytes[i]!))) i--;
    }
    if (bytes[i] === 0x2f && bytes[i - 1] === 0x3c) return at + ROW_END.length;
    at = at === 0 ? -1 : bytes.lastIndexOf(ROW_END, at - 1);
  }
  return -1;
}

/** Resolves to whether the skimmer took over (for tests and diagnostics). */
export async function streamSheet(
  chunks: AsyncIterable<Buffer>,
  part: string,
  context: SheetContext,
  profiler: SheetProfiler,
): Promise<{ skimmed: boolean }> {
  const assembler = new RowAssembler(context, profiler);
  const parser = createParser(part, {
    open: (local, tag) => assembler.openTag(local, tag.name, tag.attributes),
    close: (local) => assembler.close(local),
    text: (text) => assembler.onText(text),
  });
  const guard = new MarkupGuard(part, maxTextRun(context.maxCellChars));
  const decoder = new PartDecoder(part);
  let skimmer: SheetSkimmer | undefined;
  try {
    for await (const chunk of chunks) {
      guard.check(chunk, skimmer === undefined);
      if (skimmer !== undefined) {
        skimmer.write(chunk);
      } else {
        const cut = !profiler.wantsValues && guard.plain && decoder.utf8 ? lastRowEnd(chunk) : -1;
        if (cut === -1) parser.write(decoder.write(chunk));
        else {
          // Up to the `</row>` (an ASCII boundary, so the decoder holds nothing back) for saxes; the rest skimmed.
          parser.write(decoder.write(chunk.subarray(0, cut)));
          skimmer = new SheetSkimmer(part, assembler, assembler.openElements);
          skimmer.write(chunk.subarray(cut));
        }
      }
      if (assembler.done) return { skimmed: skimmer !== undefined };
    }
    if (skimmer !== undefined) skimmer.end();
    else parser.write(decoder.end()).close();
    return { skimmed: skimmer !== undefined };
  } catch (error) {
    throw xmlError(error, part);
  }
}
