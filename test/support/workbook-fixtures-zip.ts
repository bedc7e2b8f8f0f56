/**
 * Raw fixtures for the workbook reader: a minimal zip writer (so hostile archives can lie about
 * sizes), a hand-written .xlsx package builder for XML shapes other writers never produce, and a
 * zip rewriter to patch files written by exceljs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { crc32, deflateRawSync } from 'node:zlib';
import yauzl from 'yauzl';

export interface ZipEntryInput {
  name: string;
  data: Buffer | string;
  /** Store instead of deflate. */
  store?: boolean;
  /** Lie in both headers: declare this uncompressed size instead of the real one. */
  declaredSize?: number;
}

/** A zip archive (no zip64; enough for fixtures up to a few hundred MB of inflated data). */
export function zip(entries: readonly ZipEntryInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    const body = entry.store ? data : deflateRawSync(data, { level: 9 });
    const method = entry.store ? 0 : 8;
    const crc = crc32(data);
    const size = entry.declaredSize ?? data.length;
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The entries of a zip file as name → bytes (for patching files other writers made). */
export async function unzip(path: string): Promise<Map<string, Buffer>> {
  const archive = await yauzl.openPromise(path, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  for await (const entry of archive.eachEntry()) {
    const stream = await archive.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    out.set(entry.fileName, Buffer.concat(chunks));
  }
  archive.close();
  return out;
}

/** Rewrites a zip file, letting `patch` change any entry's text. */
export async function patchZip(
  path: string,
  patch: (name: string, text: string) => string,
  out: string = path,
): Promise<void> {
  const entries = await unzip(path);
  const rewritten = [...entries].map(([name, data]) => ({
    name,
    data: name.endsWith('.xml') || name.endsWith('.rels') ? patch(name, data.toString('utf8')) : data,
  }));
  await writeFile(out, zip(rewritten));
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships';

export interface RawSheet {
  name: string;
  /** The `<sheetData>` content (rows), or a whole worksheet part when it starts with `<?xml` or `<`+prefix. */
  rows?: string;
  xml?: string;
  state?: 'hidden' | 'veryHidden';
}

export interface RawWorkbook {
  sheets: RawSheet[];
  sharedStrings?: readonly string[];
  /** Raw `<sst>` part instead of `sharedStrings`. */
  sharedStringsXml?: string;
  /** Custom number formats by id and the cellXfs numFmtIds (style index = position). */
  numFmts?: Record<number, string>;
  cellXfs?: number[];
  /** Number formats of differential formats (`<dxfs>`, one `<dxf>` each), by id. */
  dxfNumFmts?: Record<number, string>;
  date1904?: boolean;
  definedNames?: string;
  extraEntries?: ZipEntryInput[];
}

const escapeXml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** A minimal .xlsx package with hand-written parts. */
export function rawXlsx(book: RawWorkbook): Buffer {
  const sheetsXml = book.sheets
    .map(
      (sheet, i) =>
        `<sheet name="${escapeXml(sheet.name)}" sheetId="${i + 1}"${sheet.state ? ` state="${sheet.state}"` : ''} r:id="rId${i + 1}"/>`,
    )
    .join('');
  const workbook = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="${MAIN}" xmlns:r="${REL}"><workbookPr${book.date1904 ? ' date1904="1"' : ''}/><sheets>${sheetsXml}</sheets>${book.definedNames ?? ''}</workbook>`;
  const n = book.sheets.length;
  const rels = [
    ...book.sheets.map(
      (_, i) =>
        `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
    ),
    `<Relationship Id="rId${n + 1}" Type="${REL}/styles" Target="styles.xml"/>`,
    `<Relationship Id="rId${n + 2}" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>`,
  ].join('');
  const numFmts = Object.entries(book.numFmts ?? {})
    .map(([id, code]) => `<numFmt numFmtId="${id}" formatCode="${escapeXml(code)}"/>`)
    .join('');
  const xfs = (book.cellXfs ?? [0])
    .map((id) => `<xf numFmtId="${id}" fontId="0" fillId="0" borderId="0"/>`)
    .join('');
  const dxfs = Object.entries(book.dxfNumFmts ?? {})
    .map(([id, code]) => `<dxf><numFmt numFmtId="${id}" formatCode="${escapeXml(code)}"/></dxf>`)
    .join('');
  const styles = `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${MAIN}">${
    numFmts ? `<numFmts>${numFmts}</numFmts>` : ''
  }<cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs>${xfs}</cellXfs>${
    dxfs ? `<dxfs>${dxfs}</dxfs>` : ''
  }</styleSheet>`;
  const sst =
    book.sharedStringsXml ??
    `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}">${(book.sharedStrings ?? [])
      .map((text) => `<si><t xml:space="preserve">${escapeXml(text)}</t></si>`)
      .join('')}</sst>`;
  const entries: ZipEntryInput[] = [
    {
      name: '[Content_Types].xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`,
    },
    {
      name: '_rels/.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    },
    { name: 'xl/workbook.xml', data: workbook },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG}">${rels}</Relationships>`,
    },
    { name: 'xl/styles.xml', data: styles },
    { name: 'xl/sharedStrings.xml', data: sst },
    ...book.sheets.map((sheet, i) => ({
      name: `xl/worksheets/sheet${i + 1}.xml`,
      data:
        sheet.xml ??
        `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}" xmlns:r="${REL}"><sheetData>${sheet.rows ?? ''}</sheetData></worksheet>`,
    })),
    ...(book.extraEntries ?? []),
  ];
  return zip(entries);
}

/** Writes `data` to `path` and returns the path. */
export async function put(path: string, data: Buffer | string): Promise<string> {
  await writeFile(path, data);
  return path;
}

export async function bytesOf(path: string): Promise<Buffer> {
  return readFile(path);
}

export { MAIN as SPREADSHEETML_NS, REL as RELATIONSHIPS_NS };
