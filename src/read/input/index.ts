/** The input layer of `dagu_read`: field, query and URI tables, URI parsing and the resolver. */

export {
  FIELD_RULES,
  FIELD_SPECS,
  type FieldRule,
  type FieldSpec,
  fieldRule,
  isReadInputField,
  LIMIT_RANGE,
  TARGET_MODE_FIELDS,
  TARGET_SPECS,
  type TargetSpec,
} from './fields.ts';
export { MAX_WIKI_PAGE_PATH_LENGTH, wikiPagePathProblem } from './page-path.ts';
export { pathEscape, percentDecode, queryEscape } from './percent.ts';
export {
  appendQueryParam,
  isQueryTarget,
  parseUrlQuery,
  QUERY_TABLE,
  QUERY_TARGETS,
  type QuerySource,
  type QueryTarget,
  queryValues,
  validateQuery,
} from './query.ts';
export { resolveReadInput, suppliedTarget, TARGETS_WITH_TARGET_MODE_URI } from './resolve.ts';
export { READ_INPUT_SCHEMA } from './schema.ts';
export {
  describeResourceUri,
  type ParsedResourceUri,
  parseResourceUri,
  type ReadableShape,
  URI_SHAPES,
} from './uri.ts';
