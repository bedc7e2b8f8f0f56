/**
 * Dagu's Wiki page id rule, used for `path` of `wiki_page`, for `prefix`
 * (field and query parameter) and for the page path of `dagu://wiki/{workspace}/{path}`.
 * Checking here turns a page Dagu would refuse into a clear input error instead of an upstream 400.
 */

export const MAX_WIKI_PAGE_PATH_LENGTH = 252;

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_. -]*$/;
// Windows device names, with or without an extension: Dagu stores pages as files.
const RESERVED_DEVICE = /^(?:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\..*)?$/i;

/** Why `path` is not a valid Wiki page path, or `undefined` when it is. Checked segment by segment. */
export function wikiPagePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (path.length > MAX_WIKI_PAGE_PATH_LENGTH) {
    return `must be at most ${MAX_WIKI_PAGE_PATH_LENGTH} characters long`;
  }
  for (const segment of path.split('/')) {
    if (segment === '') return 'must not have empty segments (no leading, trailing or doubled /)';
    if (!SEGMENT.test(segment)) {
      return 'segments must start with a letter, digit or underscore and hold only letters, digits, underscores, dots, hyphens and spaces';
    }
    if (segment.endsWith(' ') || segment.endsWith('.')) return 'segments must not end with a space or a dot';
    if (RESERVED_DEVICE.test(segment)) return 'segments must not be reserved device names such as con or nul';
  }
  return undefined;
}
