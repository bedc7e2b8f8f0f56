import type { ReadTarget } from '../../core/contract.ts';
import type { TargetHandler } from '../handler.ts';
import { DAG_HANDLERS } from './dags.ts';
import { foreachHandlers } from './foreach.ts';
import { referenceHandlers } from './reference.ts';
import { RUN_HANDLERS } from './runs.ts';
import { searchHandlers } from './search.ts';
import { stepLogHandlers } from './step-log.ts';
import { wikiHandlers } from './wiki.ts';
import { workbookHandlers } from './workbook.ts';

/** Every target served by the read service, one module per family. */
export const TARGET_HANDLERS: Readonly<Partial<Record<ReadTarget, TargetHandler>>> = {
  ...referenceHandlers,
  ...DAG_HANDLERS,
  ...RUN_HANDLERS,
  ...stepLogHandlers,
  ...foreachHandlers,
  ...searchHandlers,
  ...wikiHandlers,
  ...workbookHandlers,
};
