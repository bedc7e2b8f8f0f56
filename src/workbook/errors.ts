/**
 * The workbook target's failures, always as the contract's ReadError (workbook-profile.md,
 * "Input and errors"). Inside the pipeline two plain error classes mark what kind of failure
 * happened; `toWorkbookError` turns them into the caller-facing error with the file name.
 */
import { ReadError, readError } from '../read/errors.ts';

/** The file is not a readable workbook (not a zip, no workbook part, corrupt XML…). */
export class WorkbookFormatError extends Error {
  override readonly name = 'WorkbookFormatError';
}

/** A configured bound was hit: file size, zip entries, part size, shared strings, time, memory. */
export class WorkbookLimitError extends Error {
  override readonly name = 'WorkbookLimitError';
}

export const workbookErrors = {
  extension: (name: string) =>
    readError.invalidInput(`${name}: only .xlsx and .xlsm workbooks are supported; save as .xlsx`, {
      field: 'path',
    }),
  outsideRoots: (name: string) =>
    readError.invalidInput(`${name}: path is outside the allowed workbook folders`, { field: 'path' }),
  directory: (name: string) =>
    readError.invalidInput(`${name}: path is a directory, not a workbook`, { field: 'path' }),
  notFound: (name: string) => readError.notFound(`${name}: workbook not found`),
  notWorkbook: (name: string, cause: string) =>
    readError.unavailable(`${name}: not a valid .xlsx workbook (${cause})`),
  cannotOpen: (name: string, cause: string) =>
    readError.unavailable(`${name}: workbook cannot be opened (${cause})`),
  limits: (name: string, detail: string) =>
    readError.unavailable(`${name}: workbook exceeds processing limits (${detail})`),
  password: (name: string) =>
    readError.invalidInput(`${name}: workbook password is missing or incorrect`, { field: 'password' }),
  unsupportedEncryption: () => readError.unavailable('workbook encryption is not supported'),
};

const OPEN_CAUSES: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EBUSY: 'the file is in use by another program',
  EAGAIN: 'the file is locked by another program',
  ETXTBSY: 'the file is in use by another program',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
};

/** An fs error while opening or reading the file, as the contract's error. */
export function fileError(error: unknown, name: string): ReadError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return workbookErrors.notFound(name);
  if (code === 'EISDIR') return workbookErrors.directory(name);
  return workbookErrors.cannotOpen(name, (code && OPEN_CAUSES[code]) ?? 'read error');
}

/** Any failure of the pipeline as the contract's error; unexpected ones leak nothing. */
export function toWorkbookError(error: unknown, name: string): ReadError {
  if (error instanceof ReadError) return error;
  if (error instanceof WorkbookLimitError) return workbookErrors.limits(name, error.message);
  if (error instanceof WorkbookFormatError) return workbookErrors.notWorkbook(name, error.message);
  return new ReadError(
    { code: 'internal_error', message: `${name}: the workbook reader failed unexpectedly` },
    { cause: error },
  );
}
