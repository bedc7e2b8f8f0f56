/**
 * Checks a workbook path before any worker starts: the extension, the configured roots, and what
 * the path is. Without WORKBOOK_ROOTS nothing is readable (workbooks are off until an operator
 * opens a folder). A relative path resolves against the first root. A path outside every root
 * (after `..` and symbolic links are resolved) gets the same answer whether or not it exists, so
 * the check reveals nothing.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileError, workbookErrors } from './errors.ts';

export interface LocatedWorkbook {
  /** Absolute path with `..` and symbolic links resolved: what is read and reported as `data.path`. */
  resolved: string;
  /** The file name as supplied, for messages. */
  name: string;
  size: number;
  /** Device and inode of the checked file: the worker reads only this file, not one swapped in later. */
  file: { dev: number; ino: number };
}

const EXTENSIONS = new Set(['.xlsx', '.xlsm']);

/** The real path of `target`, or of its deepest existing ancestor joined with the rest. */
async function realpathLenient(target: string): Promise<string> {
  try {
    return await realpath(target);
  } catch {
    const parent = path.dirname(target);
    if (parent === target) return target;
    return path.join(await realpathLenient(parent), path.basename(target));
  }
}

function isInside(child: string, root: string): boolean {
  const relative = path.relative(root, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

export async function locateWorkbook(
  input: string,
  roots: readonly string[] | undefined,
): Promise<LocatedWorkbook> {
  // No folder opened by the operator: no file of this host is readable, whatever the path.
  if (roots === undefined || roots.length === 0) throw workbookErrors.disabled();
  const name = path.basename(input);
  if (!EXTENSIONS.has(path.extname(input).toLowerCase())) throw workbookErrors.extension(name);
  // A relative path names a file in the first root, never one in the gateway's working folder.
  const resolved = await realpathLenient(path.resolve(path.resolve(roots[0]!), input));
  const realRoots = await Promise.all(roots.map((root) => realpathLenient(path.resolve(root))));
  if (!realRoots.some((root) => isInside(resolved, root))) throw workbookErrors.outsideRoots(name);
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(resolved);
  } catch (error) {
    throw fileError(error, name);
  }
  if (info.isDirectory()) throw workbookErrors.directory(name);
  if (!info.isFile()) throw workbookErrors.notWorkbook(name, 'not a regular file');
  return { resolved, name, size: info.size, file: { dev: info.dev, ino: info.ino } };
}
