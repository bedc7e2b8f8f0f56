import type { WorkbookReader } from '../../src/workbook/index.ts';

/** For handler tests of Dagu-backed targets: a workbook reader that must never be called. */
export const NO_WORKBOOK: WorkbookReader = {
  read: () => Promise.reject(new Error('this test does not read workbooks')),
  close: () => Promise.resolve(),
};
