import { ERROR_CODES, READ_TARGETS } from '../core/contract.ts';

/** The success envelope of `dagu_read` (contract "Output"); echo fields are allowed beside it. */
const SUCCESS_SCHEMA = {
  type: 'object',
  required: ['target', 'data', 'references'],
  properties: {
    target: { type: 'string', enum: [...READ_TARGETS] },
    uri: { type: 'string' },
    data: { type: 'object' },
    references: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** The contract's error object. */
const ERROR_SCHEMA = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', enum: [...ERROR_CODES] },
    message: { type: 'string' },
    target: { type: 'string' },
    field: { type: 'string' },
    uri: { type: 'string' },
    details: { type: 'object' },
  },
  additionalProperties: false,
} as const;

/**
 * Declared output schema: success OR error. Legacy (v1) SDK clients validate `isError` results against
 * the output schema too and would throw on a success-only schema.
 */
export const READ_OUTPUT_SCHEMA = {
  type: 'object',
  anyOf: [SUCCESS_SCHEMA, ERROR_SCHEMA],
} as const;
