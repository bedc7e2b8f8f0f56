import type { ReadTarget } from '../../core/contract.ts';
import type { TargetDefinition, TargetHandler } from '../definition.ts';
import { dagTargets } from './dags.ts';
import { foreachTargets } from './foreach.ts';
import { referenceTargets } from './reference.ts';
import { runTargets } from './runs.ts';
import { searchTargets } from './search.ts';
import { stepLogTargets } from './step-log.ts';
import { wikiTargets } from './wiki.ts';
import { workbookTargets } from './workbook.ts';

const { runs, ...runFamily } = runTargets;

/**
 * Every target of the contract, one definition each, in one module per family. A target missing here
 * is a type error; the input layer, the envelope and the resource links derive their tables from this.
 */
export const TARGET_DEFINITIONS = {
  ...referenceTargets,
  ...dagTargets,
  // Targets with a query come in the order of the contract's query table (the tool's description
  // lists their parameters in this order): dags, runs, wiki, run_logs, step_log, foreach_items.
  runs,
  ...wikiTargets,
  ...runFamily,
  ...stepLogTargets,
  ...foreachTargets,
  ...searchTargets,
  ...workbookTargets,
} satisfies Record<ReadTarget, TargetDefinition>;

/** The handlers of some definitions, by target. */
export function handlersOf(
  definitions: Readonly<Partial<Record<ReadTarget, TargetDefinition>>>,
): Readonly<Partial<Record<ReadTarget, TargetHandler>>> {
  const entries = Object.entries(definitions) as [ReadTarget, TargetDefinition][];
  return Object.fromEntries(entries.map(([target, definition]) => [target, definition.handle]));
}

/** The handler of every target, for the read service. */
export const TARGET_HANDLERS = handlersOf(TARGET_DEFINITIONS);

/** The definition of `target`, as the tables see it. */
export function definitionOf(target: ReadTarget): TargetDefinition {
  return TARGET_DEFINITIONS[target];
}
