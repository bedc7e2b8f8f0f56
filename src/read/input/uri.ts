import { ALL_WORKSPACES, type ReadTarget } from '../../core/contract.ts';
import { shownValue } from '../../core/shown-value.ts';
import type { TargetDefinition } from '../definition.ts';
import { ReadError, readError } from '../errors.ts';
import { TARGET_DEFINITIONS } from '../targets/index.ts';
import type { ReadFields, ReadQuery } from '../types.ts';
import {
  buildUri,
  RESOURCE_FAMILIES,
  type ResourceFamily,
  type ResourceLinkInfo,
  SHAPE_TABLE,
  type UriShape,
  withQuery,
} from '../uri-shapes.ts';
import { wikiPagePathProblem } from './page-path.ts';
import { percentDecode } from './percent.ts';
import { isQueryTarget, type QueryTarget, validateQuery } from './query.ts';

/**
 * Parsing `dagu://` URIs against the shape table (src/read/uri-shapes.ts). URIs are parsed by hand:
 * WHATWG `URL` would drop `..` segments, accept `%zz` and keep host case before we could validate them.
 */

/** A shape with the target it reads (from the target definitions) and, when it takes one, its query table. */
export interface ReadableShape extends UriShape {
  target: ReadTarget;
  /** The query table this shape follows; absent for singular resources, which take no query. */
  query?: QueryTarget;
}

/**
 * The `dagu://` shapes the definitions claim, each with its target, in the shape table's order. A shape
 * no definition claims is neither parsed nor advertised; a shape claimed twice is a wiring error.
 */
export function readableShapes(
  definitions: Readonly<Record<ReadTarget, Pick<TargetDefinition, 'uri'>>>,
): readonly ReadableShape[] {
  const targetOf = new Map<string, ReadTarget>();
  for (const [target, definition] of Object.entries(definitions) as [ReadTarget, TargetDefinition][]) {
    for (const shape of definition.uri?.shapes ?? []) {
      if (targetOf.has(shape.id)) throw new Error(`URI shape ${shape.id} is claimed by two targets`);
      targetOf.set(shape.id, target);
    }
  }
  return Object.freeze(
    SHAPE_TABLE.flatMap((shape): ReadableShape[] => {
      const target = targetOf.get(shape.id);
      if (target === undefined) return [];
      return [
        Object.freeze(isQueryTarget(target) ? { ...shape, target, query: target } : { ...shape, target }),
      ];
    }),
  );
}

/** Every readable `dagu://` shape with its target, from the target definitions. */
export const URI_SHAPES: readonly ReadableShape[] = readableShapes(TARGET_DEFINITIONS);

const SHAPES_BY_FAMILY: ReadonlyMap<string, readonly ReadableShape[]> = new Map(
  RESOURCE_FAMILIES.map((family) => [family, URI_SHAPES.filter((shape) => shape.family === family)]),
);
const FAMILY_TEMPLATES: ReadonlyMap<string, string> = new Map(
  RESOURCE_FAMILIES.map((family) => [
    family,
    (SHAPES_BY_FAMILY.get(family) ?? []).map((shape) => shape.template).join(', '),
  ]),
);

// ---- parsing --------------------------------------------------------------------------------

export interface ParsedResourceUri {
  shape: ReadableShape;
  target: ReadTarget;
  /** Values decoded from the path (plus `workspace: all` for `dagu://wiki`, `query` when given). */
  fields: ReadFields;
  /** The fields the URI itself gives: its path values and `query`, not the `workspace: all` default. */
  supplied: Array<keyof ReadFields>;
  query?: ReadQuery;
  /** Canonical form: rebuilt from the decoded segments, the query echoed exactly as given. */
  uri: string;
}

interface SplitUri {
  family: ResourceFamily;
  segments: string[];
  rawQuery: string;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

// Go's url.Parse refuses ASCII control characters anywhere in a URL.
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

// The families are exactly these hosts; the deprecated `docs`/`doc`/`doc_search` names are target
// values only (targets.ts), so `dagu://docs…` is an unsupported family like any other host.
function familyOf(host: string): ResourceFamily | undefined {
  return (RESOURCE_FAMILIES as readonly string[]).includes(host) ? (host as ResourceFamily) : undefined;
}

/** Syntax checks shared by parsing and link naming. `input` is the trimmed `uri` field. */
function splitUri(input: string): SplitUri {
  const invalid = (message: string) => readError.invalidUri(message, { field: 'uri', uri: input });
  if (hasControlCharacter(input)) throw invalid('The uri must not contain control characters.');
  const scheme = SCHEME.exec(input);
  if (scheme === null || scheme[1]?.toLowerCase() !== 'dagu') {
    throw invalid('The uri must be a dagu:// resource URI.');
  }
  const rest = input.slice(scheme[0].length);
  if (!rest.startsWith('//'))
    throw invalid('The uri must have the form dagu://{family}/…; opaque forms are not valid.');
  if (rest.includes('#')) throw invalid('The uri must not contain a fragment (#).');
  const afterSlashes = rest.slice(2);
  const queryAt = afterSlashes.indexOf('?');
  const hierarchy = queryAt < 0 ? afterSlashes : afterSlashes.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? '' : afterSlashes.slice(queryAt + 1);
  const pathAt = hierarchy.indexOf('/');
  const host = pathAt < 0 ? hierarchy : hierarchy.slice(0, pathAt);
  const path = pathAt < 0 ? '' : hierarchy.slice(pathAt + 1);
  if (host === '') throw invalid('The uri must name a resource family after dagu://.');
  if (host.includes('@') || host.includes(':')) {
    throw invalid('The uri must not carry user information or a port.');
  }
  const segments: string[] = [];
  if (pathAt >= 0) {
    for (const raw of path.split('/')) {
      if (raw === '') throw invalid('The uri path must not have empty segments (no trailing or doubled /).');
      const segment = percentDecode(raw, false);
      if (segment === undefined) {
        throw invalid(
          'The uri path has an invalid percent-encoding (% must be followed by two hex digits of UTF-8).',
        );
      }
      // Checked after decoding: Dagu would clean `%2E%2E` into path structure as well.
      if (segment === '.' || segment === '..')
        throw invalid("The uri path must not have '.' or '..' segments.");
      segments.push(segment);
    }
  }
  const family = familyOf(host);
  if (family === undefined) {
    throw new ReadError({
      code: 'unsupported_resource',
      message: `The resource family ${shownValue(host)} is not supported; use one of ${RESOURCE_FAMILIES.join(', ')}.`,
      field: 'uri',
      uri: input,
    });
  }
  return { family, segments, rawQuery };
}

function matches(shape: ReadableShape, segments: readonly string[]): boolean {
  const last = shape.parts.at(-1);
  const spans = last !== undefined && typeof last !== 'string' && last.rest === true;
  if (spans ? segments.length < shape.parts.length : segments.length !== shape.parts.length) return false;
  return shape.parts.every((part, i) => typeof part !== 'string' || segments[i] === part);
}

function findShape(split: SplitUri): ReadableShape | undefined {
  return SHAPES_BY_FAMILY.get(split.family)?.find((shape) => matches(shape, split.segments));
}

function fieldsOf(shape: ReadableShape, segments: readonly string[]): ReadFields {
  const fields: ReadFields = {};
  shape.parts.forEach((part, i) => {
    if (typeof part === 'string') return;
    fields[part.slot] = part.rest ? segments.slice(i).join('/') : (segments[i] ?? '');
  });
  return fields;
}

/**
 * Parses and validates a `dagu://` URI (already trimmed). Order: control characters, scheme,
 * opaque form, fragment, authority, path segments (escapes, empty, dot), family, shape, query on a
 * singular resource, Wiki workspace and page path, query parameters.
 * Throws `invalid_resource_uri` / `unsupported_resource` with `field: "uri"` and the input as `uri`;
 * errors found once the shape is known also carry its `target`.
 */
export function parseResourceUri(input: string): ParsedResourceUri {
  const split = splitUri(input);
  const shape = findShape(split);
  if (shape === undefined) {
    throw readError.invalidUri(
      `The uri path is not a supported dagu://${split.family} shape; supported: ${FAMILY_TEMPLATES.get(split.family)}.`,
      { field: 'uri', uri: input },
    );
  }
  const { target } = shape;
  const invalid = (message: string) => readError.invalidUri(message, { target, field: 'uri', uri: input });
  const { rawQuery } = split;
  if (rawQuery !== '' && shape.query === undefined) {
    throw invalid(`${shape.template} resources do not accept query parameters.`);
  }
  const fields = fieldsOf(shape, split.segments);
  const supplied = Object.keys(fields) as Array<keyof ReadFields>;
  if (shape.family === 'wiki') {
    if (fields.workspace === ALL_WORKSPACES) {
      throw invalid(
        shape.id === 'wiki_page'
          ? 'A Wiki page URI needs one concrete workspace, not all.'
          : 'Use dagu://wiki for the Wiki of all workspaces.',
      );
    }
    if (fields.path !== undefined) {
      const problem = wikiPagePathProblem(fields.path);
      if (problem !== undefined) throw invalid(`The Wiki page path in the uri ${problem}.`);
    }
    fields.workspace ??= ALL_WORKSPACES;
  }
  const parsed: ParsedResourceUri = {
    shape,
    target,
    fields,
    supplied,
    uri: withQuery(buildUri(shape, fields), rawQuery),
  };
  if (rawQuery !== '' && shape.query !== undefined) {
    parsed.query = validateQuery(shape.query, rawQuery, { mode: 'uri', uri: input });
    fields.query = rawQuery;
    supplied.push('query');
  }
  return parsed;
}

// ---- link naming ----------------------------------------------------------------------------

const PLAIN_PREFIX = 'dagu://';
/** Segment bounds of the URI being named (one at a time: naming never yields); more take the full parse. */
const MAX_PLAIN_SEGMENTS = 16;
const segmentStarts = new Int32Array(MAX_PLAIN_SEGMENTS);
const segmentEnds = new Int32Array(MAX_PLAIN_SEGMENTS);

/** Printable ASCII other than `%`, `?` and `#`: nothing in such a URI is decoded, trimmed or cut off. */
const isPlainCode = (code: number) =>
  code > 0x20 && code < 0x7f && code !== 0x25 && code !== 0x3f && code !== 0x23;

const isDotSegment = (uri: string, start: number, length: number) =>
  (length === 1 || length === 2) &&
  uri.charCodeAt(start) === 0x2e &&
  (length === 1 || uri.charCodeAt(start + 1) === 0x2e);

/** The family named by the host between `dagu://` and `hostEnd`, read in place. */
function plainFamily(uri: string, hostEnd: number): ResourceFamily | undefined {
  for (const family of RESOURCE_FAMILIES) {
    if (hostEnd - PLAIN_PREFIX.length === family.length && uri.startsWith(family, PLAIN_PREFIX.length))
      return family;
  }
  return undefined;
}

function matchesInPlace(shape: ReadableShape, uri: string, count: number): boolean {
  const { parts } = shape;
  const last = parts.at(-1);
  const spans = last !== undefined && typeof last !== 'string' && last.rest === true;
  if (spans ? count < parts.length : count !== parts.length) return false;
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    if (typeof part !== 'string') continue;
    if (segmentEnds[i]! - segmentStarts[i]! !== part.length || !uri.startsWith(part, segmentStarts[i]!))
      return false;
  }
  return true;
}

/**
 * The shape of a plain URI (`dagu://` in lower case, then printable ASCII without `%`, `?`, `#`, and
 * no `@` or `:` in the host), as the URIs the read service returns are but for a query or an escape:
 * the same verdict as the full parse, read in place without its segment list and copies. `undefined`
 * when no shape matches; `null` when the URI is not plain and the full parse must decide.
 */
function plainShape(uri: string): ReadableShape | undefined | null {
  if (!uri.startsWith(PLAIN_PREFIX)) return null;
  let hostEnd = -1;
  let count = 0;
  let start = PLAIN_PREFIX.length;
  for (let i = start; i <= uri.length; i += 1) {
    // The end of the URI closes the host or the last segment, as a `/` would.
    const code = i === uri.length ? 0x2f : uri.charCodeAt(i);
    if (code !== 0x2f) {
      if (!isPlainCode(code) || (hostEnd < 0 && (code === 0x40 || code === 0x3a))) return null;
      continue;
    }
    if (hostEnd < 0) hostEnd = i;
    else {
      const length = i - start;
      // An empty, `.` or `..` segment is refused by the full parse: the URI names nothing.
      if (length === 0 || isDotSegment(uri, start, length)) return undefined;
      if (count === MAX_PLAIN_SEGMENTS) return null;
      segmentStarts[count] = start;
      segmentEnds[count] = i;
      count += 1;
    }
    start = i + 1;
  }
  const family = plainFamily(uri, hostEnd);
  if (family === undefined) return undefined;
  for (const shape of SHAPES_BY_FAMILY.get(family) ?? []) {
    if (matchesInPlace(shape, uri, count)) return shape;
  }
  return undefined;
}

/** The resource-link `name` and `mimeType` for any `dagu://` URI shape, or `undefined` if it has none. */
export function describeResourceUri(uri: string): ResourceLinkInfo | undefined {
  const plain = plainShape(uri);
  if (plain !== null) return plain?.link;
  try {
    return findShape(splitUri(uri.trim()))?.link;
  } catch {
    return undefined;
  }
}
