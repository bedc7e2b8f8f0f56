import type { ReadTarget } from '../core/contract.ts';
import { definitionOf } from './targets/index.ts';
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

export function buildEnvelope(request: ResolvedRead, data: Record<string, unknown>): ReadEnvelope {
  const envelope: ReadEnvelope = { target: request.target, data, references: [...RESULT_REFERENCES] };
  if (request.uri !== undefined) envelope.uri = request.uri;
  for (const field of definitionOf(request.target).echo ?? []) {
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
