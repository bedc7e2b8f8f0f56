/**
 * The workbook reader's failures (docs/workbook-profile.md, "Input and errors"), as WorkbookErrors: a
 * kind, a message that names the file, and the input field at fault. The workbook target maps them to
 * the contract's errors (src/read/targets/workbook.ts); this layer knows nothing of the contract.
 * Inside the pipeline two plain error classes mark what kind of failure happened; `toWorkbookError`
 * turns them into WorkbookErrors with the file name.
 */

/** The file is not a readable workbook (not a zip, no workbook part, corrupt XML…). */
export class WorkbookFormatError extends Error {
  override readonly name = 'WorkbookFormatError';
}

/** A configured bound was hit: file size, zip entries, part size, shared strings, time, memory. */
export class WorkbookLimitError extends Error {
  override readonly name = 'WorkbookLimitError';
}

/**
 * - `disabled`: workbook reads are off (no WORKBOOK_ROOTS);
 * - `bad_path` / `bad_password`: the caller's `path` or `password` cannot be used;
 * - `not_found`: no such file;
 * - `unreadable`: the file cannot be opened or is not a valid workbook, or its encryption is unsupported;
 * - `too_large`: a processing bound was hit;
 * - `busy`: no worker was free for this caller in time, or the queue was full;
 * - `failed`: the reader failed unexpectedly.
 */
export type WorkbookFailureKind =
  | 'disabled'
  | 'bad_path'
  | 'bad_password'
  | 'not_found'
  | 'unreadable'
  | 'too_large'
  | 'busy'
  | 'failed';

/** What crosses the worker-thread boundary. */
export interface WorkbookFailure {
  kind: WorkbookFailureKind;
  message: string;
}

export class WorkbookError extends Error {
  override readonly name = 'WorkbookError';
  readonly kind: WorkbookFailureKind;

  constructor(kind: WorkbookFailureKind, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
  }

  toFailure(): WorkbookFailure {
    return { kind: this.kind, message: this.message };
  }
}

const fail = (kind: WorkbookFailureKind, message: string) => new WorkbookError(kind, message);

export const workbookErrors = {
  disabled: () =>
    fail(
      'disabled',
      'Workbook reads are off on this gateway: the operator has opened no folder. Set WORKBOOK_ROOTS to the folders agents may read.',
    ),
  extension: (name: string) =>
    fail('bad_path', `${name}: only .xlsx and .xlsm workbooks are supported; save as .xlsx`),
  outsideRoots: (name: string) => fail('bad_path', `${name}: path is outside the allowed workbook folders`),
  directory: (name: string) => fail('bad_path', `${name}: path is a directory, not a workbook`),
  notFound: (name: string) => fail('not_found', `${name}: workbook not found`),
  notWorkbook: (name: string, cause: string) =>
    fail('unreadable', `${name}: not a valid .xlsx workbook (${cause})`),
  cannotOpen: (name: string, cause: string) =>
    fail('unreadable', `${name}: workbook cannot be opened (${cause})`),
  limits: (name: string, detail: string) =>
    fail('too_large', `${name}: workbook exceeds processing limits (${detail})`),
  busy: (name: string, detail: string) =>
    fail('busy', `${name}: the workbook reader is busy (${detail}); try again later`),
  password: (name: string) => fail('bad_password', `${name}: workbook password is missing or incorrect`),
  unsupportedEncryption: () => fail('unreadable', 'workbook encryption is not supported'),
  unexpected: (name: string, cause?: unknown) =>
    new WorkbookError('failed', `${name}: the workbook reader failed unexpectedly`, { cause }),
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

/** An fs error while opening or reading the file. */
export function fileError(error: unknown, name: string): WorkbookError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return workbookErrors.notFound(name);
  if (code === 'EISDIR') return workbookErrors.directory(name);
  return workbookErrors.cannotOpen(name, (code && OPEN_CAUSES[code]) ?? 'read error');
}

/** Any failure of the pipeline as a WorkbookError; unexpected ones leak nothing. */
export function toWorkbookError(error: unknown, name: string): WorkbookError {
  if (error instanceof WorkbookError) return error;
  if (error instanceof WorkbookLimitError) return workbookErrors.limits(name, error.message);
  if (error instanceof WorkbookFormatError) return workbookErrors.notWorkbook(name, error.message);
  return workbookErrors.unexpected(name, error);
}
