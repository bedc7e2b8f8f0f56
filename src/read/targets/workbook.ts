import type { ErrorCode } from '../../core/contract.ts';
import { merged } from '../../core/merged.ts';
import { WorkbookError, type WorkbookFailureKind } from '../../workbook/errors.ts';
import { defineTarget } from '../definition.ts';
import { ReadError } from '../errors.ts';

const CONTRACT_ERROR: Readonly<Record<WorkbookFailureKind, { code: ErrorCode; field?: string }>> = {
  disabled: { code: 'unauthorized' },
  bad_path: { code: 'invalid_tool_input', field: 'path' },
  bad_password: { code: 'invalid_tool_input', field: 'password' },
  not_found: { code: 'resource_not_found' },
  unreadable: { code: 'resource_unavailable' },
  too_large: { code: 'resource_unavailable' },
  busy: { code: 'resource_unavailable' },
  failed: { code: 'internal_error' },
};

/**
 * The contract's error for a failure of the workbook reader (docs/workbook-profile.md,
 * "Input and errors").
 */
export function readErrorFromWorkbook(error: WorkbookError): ReadError {
  return new ReadError(
    merged(CONTRACT_ERROR[error.kind], { message: error.message }),
    error.cause === undefined ? {} : { cause: error.cause },
  );
}

/**
 * `workbook`: profiles an .xlsx/.xlsm file on the gateway's host (docs/workbook-profile.md). The reader
 * checks the path, roots and bounds itself and runs the parse in a worker thread; the password goes to
 * it and nowhere else.
 */
export const workbookTargets = {
  workbook: defineTarget({
    fields: { required: ['path'], optional: ['password'] },
    echo: ['path'],
    handle: async (request, deps, call) => {
      if (!call.access.readsWorkbooks) {
        throw new ReadError({ code: 'unauthorized', message: 'This caller was not granted workbook reads.' });
      }
      try {
        const model = await deps.workbook.read(
          request.fields.path,
          request.fields.password,
          call.signal,
          call.caller,
        );
        return { data: model as unknown as Record<string, unknown> };
      } catch (error) {
        throw error instanceof WorkbookError ? readErrorFromWorkbook(error) : error;
      }
    },
  }),
};
