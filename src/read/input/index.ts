/** The input layer of `dagu_read`: field, target, query and URI tables, builders and the resolver. */

export { ALL_WORKSPACES } from '../../core/contract.ts';
export {
  DEFAULT_REFERENCE_TOPIC,
  FIELD_RULES,
  FIELD_SPECS,
  type FieldRule,
  type FieldSpec,
  fieldRule,
  isReadInputField,
  LIMIT_RANGE,
  READ_INPUT_FIELDS,
  type ReadInputField,
  TARGET_FIELDS,
  TARGET_MODE_FIELDS,
  TARGET_SPECS,
  type TargetField,
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
  type QueryParamSpec,
  type QuerySource,
  type QueryTarget,
  type QueryTargetSpec,
  queryValues,
  type ValueRule,
  validateQuery,
} from './query.ts';
export { resolveReadInput, TARGETS_WITH_TARGET_MODE_URI } from './resolve.ts';
export { READ_INPUT_SCHEMA } from './schema.ts';
export {
  dagsSpecUri,
  dagsUri,
  describeResourceUri,
  foreachItemsUri,
  foreachItemUri,
  foreachStepLogUri,
  type ParsedResourceUri,
  parseResourceUri,
  RESOURCE_FAMILIES,
  type ResourceFamily,
  type ResourceLinkInfo,
  type RunRef,
  referenceUri,
  resourceLinkFor,
  runLogsUri,
  runsUri,
  runUri,
  stepLogUri,
  URI_SHAPES,
  type UriShape,
  wikiPageUri,
  wikiUri,
  withQuery,
} from './uri.ts';
