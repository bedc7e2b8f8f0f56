import type { ReadTarget } from '../core/contract.ts';
import type { ResolvedRead } from './types.ts';

/** The structured output of a successful read: the contract's exact top-level envelope plus echo fields. */
export interface ReadEnvelope {
  target: ReadTarget;
  uri?: string;
  data: Record<string, unknown>;
  references: string[];
  [echo: string]: unknown;
}

/** The three reference URIs every successful result carries. */
export const RESULT_REFERENCES = [
  'dagu://reference/authoring',
  'dagu://reference/tools',
  'dagu://reference/notifications',
] as const;

const SUCCESS_TEXT = 'Dagu read completed.';

/** Echo fields per target family (contract "Output" rules). */
const RUN_ECHO = ['name', 'dagRunId', 'stepName', 'subRunId', 'item', 'bodyStepName'] as const;
const WIKI_ECHO = ['workspace', 'path', 'prefix'] as const;
const ECHO_FIELDS: Partial<Record<ReadTarget, readonly (keyof ResolvedRead['fields'])[]>> = {
  step_log: RUN_ECHO,
  foreach_items: RUN_ECHO,
  foreach_item: RUN_ECHO,
  wiki: WIKI_ECHO,
  wiki_page: WIKI_ECHO,
  wiki_search: WIKI_ECHO,
  workbook: ['path'],
};

export function buildEnvelope(request: ResolvedRead, data: Record<string, unknown>): ReadEnvelope {
  const envelope: ReadEnvelope = { target: request.target, data, references: [...RESULT_REFERENCES] };
  if (request.uri !== undefined) envelope.uri = request.uri;
  for (const field of ECHO_FIELDS[request.target] ?? []) {
    if (request.supplied?.includes(field) === false) continue;
    const value = request.fields[field];
    if (value !== undefined) envelope[field] = value;
  }
  return envelope;
}

/** The contract's success text: `dags` adds a blank line and the indented JSON of `data`. */
export function successText(envelope: ReadEnvelope): string {
  return envelope.target === 'dags'
    ? `${SUCCESS_TEXT}\n\n${JSON.stringify(envelope.data, null, 2)}`
    : SUCCESS_TEXT;
}
