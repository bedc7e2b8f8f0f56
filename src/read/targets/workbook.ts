import { readError } from '../errors.ts';
import type { TargetHandler } from '../handler.ts';
import type { ReadTarget } from '../targets.ts';

/**
 * `workbook`: profiles an .xlsx/.xlsm file on the gateway's host (spec/workbook-profile.md). The reader
 * checks the path, roots and bounds itself and runs the parse in a worker thread; the password goes to
 * it and nowhere else.
 */
export const workbookHandlers: Partial<Record<ReadTarget, TargetHandler>> = {
  workbook: async (request, deps, call) => {
    const path = request.fields.path;
    if (path === undefined) throw readError.invalidInput('The path field is required for target workbook.');
    const model = await deps.workbook.read(path, request.fields.password, call.signal);
    return { data: model as unknown as Record<string, unknown> };
  },
};
