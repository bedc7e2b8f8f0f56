import { shownValue } from '../../core/shown-value.ts';
import { isForeachStep, serves } from '../../dagu/dialect.ts';
import { type ReadError, readError } from '../errors.ts';
import type { RunRef } from '../uri-shapes.ts';
import { isRecord, list, optionalInteger, optionalText } from './bodies.ts';
import { fetchRunDetails, runSubject } from './runs.ts';
import type { ReadScope } from './scope.ts';

/**
 * A foreach read on a Dagu without foreach REST routes: any Dagu 1.x, and Dagu 2.x before they exist
 * (v2.15.1 answers them with its router's 404). Before saying "unavailable", establish what the request names, from the run details Dagu does
 * serve: an unknown DAG, run or sub run, or an unknown step, is `resource_not_found` (thrown by the run
 * read, or returned); a step that is not a foreach step has no foreach items, so it is not found
 * either; only a real foreach step, whose per-item state this Dagu does not expose, is
 * `resource_unavailable`, naming what is missing.
 */
export async function explainMissingForeachRoutes(
  scope: ReadScope,
  run: RunRef,
  stepName: string,
): Promise<ReadError> {
  const { details } = await fetchRunDetails(scope, run);
  const node = list(details.nodes, 'dagRunDetails.nodes').find(
    (candidate) => isRecord(candidate) && isRecord(candidate.step) && candidate.step.name === stepName,
  );
  const where = runSubject(run);
  if (!isRecord(node) || !isRecord(node.step)) {
    return readError.notFound(`Step ${shownValue(stepName)} does not exist in ${where}.`);
  }
  if (!isForeachStep(node.step)) {
    const why = serves(scope.deps.dagu.generation, 'foreach')
      ? ''
      : ' (the connected Dagu 1.x has no foreach steps)';
    return readError.notFound(
      `Step ${shownValue(stepName)} of ${where} is not a foreach step${why}: it has no foreach items.`,
    );
  }
  const done = optionalInteger(node.doneCount);
  const status = optionalText(node.statusLabel);
  const known = [
    status === undefined ? '' : `its status (${status})`,
    done === undefined ? '' : `doneCount ${done}`,
  ]
    .filter((part) => part !== '')
    .join(' and ');
  return readError.unavailable(
    `Step ${shownValue(stepName)} of ${where} is a foreach step, but the connected Dagu does not serve its per-item ` +
      `state (no foreach REST routes: GET …/steps/{stepName}/foreach…)${known === '' ? '' : `; it reports only ${known}`}. ` +
      'Reading foreach items and their body logs needs a Dagu 2.x release with those routes.',
  );
}
