/**
 * The whole read of one workbook file (runs inside the worker): sniff, decrypt if needed, open the
 * zip, read the package parts, then stream each sheet once into its profile.
 */
import fs from 'node:fs';
import { promisify } from 'node:util';
import { quoteSheetName } from './cells.ts';
import type { DateKind } from './dates.ts';
import { fileError, toWorkbookError, WorkbookFormatError, WorkbookLimitError } from './errors.ts';
import { calibrateHashRates, type HashRates } from './key-derivation.ts';
import type { NamedRange, WorkbookBounds, WorkbookModel, WorkbookSheet, WorkbookTable } from './model.ts';
import {
  parseRels,
  parseStyles,
  parseTable,
  parseWorkbook,
  type Relationship,
  relsPartFor,
  type WorkbookInfo,
} from './ooxml.ts';
import { readSharedStrings, SharedStrings } from './shared-strings.ts';
import { SheetProfiler } from './sheet-profile.ts';
import { SheetDataError, streamSheet } from './sheet-stream.ts';
import { SNIFF_BYTES, sniff } from './sniff.ts';
import { ZipPackage } from './zip.ts';

export interface ReadRequest {
  /** Absolute path of the file to read. */
  path: string;
  /** Device and inode the path had when it was checked; the file opened must be the same one. */
  file?: { dev: number; ino: number };
  /** File name used in messages. */
  name: string;
  password: string | undefined;
  bounds: WorkbookBounds;
  /** Hash rates calibrated at start-up (the pool passes its own); absent, measured once here. */
  hashRates?: HashRates;
}

const openFd = promisify(fs.open);
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOFOLLOW ?? 0);
const CHANGED = 'the file changed while it was being opened';
const fstat = promisify(fs.fstat);
const readFd = promisify(fs.read);
const closeFd = promisify(fs.close);

/** Reads a whole (size-checked) file through its descriptor. */
async function readAll(fd: number, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  let offset = 0;
  while (offset < size) {
    const { bytesRead } = await readFd(fd, buffer, offset, size - offset, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return buffer.subarray(0, offset);
}

/** Opens the file (zip or encrypted CFB) as a zip package. */
async function openPackage(request: ReadRequest, startedAt: number): Promise<ZipPackage> {
  const { path, name, bounds } = request;
  let fd: number;
  try {
    // Non-blocking: a FIFO swapped in after the checks must not hold an I/O thread forever. No
    // symbolic link at the last component: the path is already resolved, so one is a swap too.
    fd = await openFd(path, OPEN_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new WorkbookFormatError(CHANGED);
    throw fileError(error, name);
  }
  // From `fromFd` on, ZipPackage owns the descriptor (and closes it, also when opening fails).
  let handedOver = false;
  try {
    const stat = await fstat(fd);
    if (stat.isDirectory()) throw fileError(Object.assign(new Error('directory'), { code: 'EISDIR' }), name);
    if (!stat.isFile()) throw new WorkbookFormatError('not a regular file');
    if (request.file !== undefined && (stat.dev !== request.file.dev || stat.ino !== request.file.ino)) {
      throw new WorkbookFormatError(CHANGED);
    }
    if (stat.size > bounds.maxFileBytes)
      throw new WorkbookLimitError(`file is ${stat.size} bytes, more than ${bounds.maxFileBytes}`);
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await readFd(fd, head, 0, SNIFF_BYTES, 0);
    const kind = sniff(head.subarray(0, bytesRead));
    if (kind === 'zip') {
      // yauzl reads through the descriptor just checked, so a file swapped after the checks is not read.
      handedOver = true;
      return await ZipPackage.fromFd(fd, bounds);
    }
    if (kind === 'cfb') {
      const file = await readAll(fd, stat.size);
      const budgetMs = bounds.deadlineMs - (performance.now() - startedAt);
      // Loaded on demand: the crypto libraries cost every worker memory, and most files are not encrypted.
      const { decryptWorkbook } = await import('./encryption.ts');
      const plain = await decryptWorkbook(file, {
        name,
        password: request.password,
        budgetMs,
        maxSpinCount: bounds.maxSpinCount,
        hashRates: request.hashRates ?? calibrateHashRates(),
      });
      if (sniff(plain.subarray(0, SNIFF_BYTES)) !== 'zip')
        throw new WorkbookFormatError('the decrypted package is not a zip archive');
      return await ZipPackage.fromBuffer(plain, bounds);
    }
    throw new WorkbookFormatError(kind === 'empty' ? 'empty file' : 'not a zip archive');
  } finally {
    if (!handedOver) await closeFd(fd).catch(() => undefined);
  }
}

/** The main document part, found through the package relationships (`_rels/.rels`). */
async function findWorkbookPart(zip: ZipPackage, bounds: WorkbookBounds): Promise<string> {
  if (zip.has('_rels/.rels')) {
    const rels = parseRels(await zip.readText('_rels/.rels', bounds.maxPartBytes), '', '_rels/.rels');
    const main = rels.find((rel) => rel.type === 'officeDocument' && !rel.external);
    if (main !== undefined && zip.has(main.target)) return main.target;
  }
  if (zip.has('xl/workbook.xml')) return 'xl/workbook.xml';
  throw new WorkbookFormatError('no workbook part');
}

async function readRels(zip: ZipPackage, part: string, bounds: WorkbookBounds): Promise<Relationship[]> {
  const relsPart = relsPartFor(part);
  if (!zip.has(relsPart)) return [];
  return parseRels(await zip.readText(relsPart, bounds.maxPartBytes), part, relsPart);
}

/** Defined names as listed; a formula longer than a cell may hold (Excel allows 8,192 characters) is cut. */
function namedRanges(info: WorkbookInfo, maxChars: number): NamedRange[] {
  return info.definedNames.map((name) => ({
    name: name.name,
    refers_to: name.refersTo.length > maxChars ? `${name.refersTo.slice(0, maxChars)}…` : name.refersTo,
    scope: name.localSheetId === undefined ? '' : (info.sheets[name.localSheetId]?.name ?? ''),
  }));
}

async function readTables(
  zip: ZipPackage,
  sheetName: string,
  rels: Relationship[],
  bounds: WorkbookBounds,
): Promise<WorkbookTable[]> {
  const tables: WorkbookTable[] = [];
  for (const rel of rels) {
    if (rel.type !== 'table' || rel.external || !zip.has(rel.target)) continue;
    const table = parseTable(await zip.readText(rel.target, bounds.maxPartBytes), rel.target);
    if (table !== undefined)
      tables.push({ name: table.name, range: `${quoteSheetName(sheetName)}!${table.ref}` });
  }
  return tables;
}

async function readPackage(zip: ZipPackage, request: ReadRequest): Promise<WorkbookModel> {
  const { bounds } = request;
  const workbookPart = await findWorkbookPart(zip, bounds);
  const info = parseWorkbook(await zip.readText(workbookPart, bounds.maxPartBytes), workbookPart);
  const rels = await readRels(zip, workbookPart, bounds);
  const byId = new Map(rels.map((rel) => [rel.id, rel]));
  const dateSystem = info.date1904 ? '1904' : '1900';

  const stylesRel = rels.find((rel) => rel.type === 'styles' && !rel.external && zip.has(rel.target));
  const dateKinds: (DateKind | null)[] = stylesRel
    ? parseStyles(await zip.readText(stylesRel.target, bounds.maxPartBytes), stylesRel.target)
    : [];
  const stringsRel = rels.find((rel) => rel.type === 'sharedStrings' && !rel.external && zip.has(rel.target));
  const strings = stringsRel
    ? await readSharedStrings(zip.chunks(stringsRel.target, bounds.maxPartBytes), stringsRel.target, bounds)
    : new SharedStrings();

  const sheets: WorkbookSheet[] = [];
  const warnings: string[] = [];
  for (const entry of info.sheets) {
    const profiler = new SheetProfiler(entry.name, { dateSystem, maxColumns: bounds.maxColumns });
    const rel = entry.relId === undefined ? undefined : byId.get(entry.relId);
    let tables: WorkbookTable[] = [];
    if (rel === undefined || rel.external || !zip.has(rel.target)) {
      profiler.warnings.fail('sheet part is missing; not profiled');
    } else if (rel.type !== 'worksheet') {
      profiler.warnings.add(`${rel.type === 'chartsheet' ? 'chart sheet' : rel.type}; not profiled`);
    } else {
      tables = await readTables(zip, entry.name, await readRels(zip, rel.target, bounds), bounds);
      try {
        await streamSheet(
          zip.chunks(rel.target, bounds.maxSheetBytes),
          rel.target,
          { strings, dateKinds, dateSystem, maxCellChars: bounds.maxCellChars },
          profiler,
        );
      } catch (error) {
        // A well-formed sheet with impossible content stops there and keeps what it has.
        if (!(error instanceof SheetDataError)) throw error;
        profiler.warnings.fail(error.message);
      }
    }
    const result = profiler.finish({ hidden: entry.state !== 'visible', tables });
    sheets.push(result.sheet);
    warnings.push(...result.warnings);
  }
  return {
    path: request.path,
    date_system: dateSystem,
    sheets,
    named_ranges: namedRanges(info, bounds.maxCellChars),
    warnings,
  };
}

/** Reads and profiles one workbook; every failure is a WorkbookError carrying the file name. */
export async function readWorkbook(request: ReadRequest): Promise<WorkbookModel> {
  const startedAt = performance.now();
  let zip: ZipPackage | undefined;
  try {
    zip = await openPackage(request, startedAt);
    return await readPackage(zip, request);
  } catch (error) {
    throw toWorkbookError(error, request.name);
  } finally {
    zip?.close();
  }
}
