/** Every read target of the contract, in the order the contract's target table lists them. */
export const READ_TARGETS = [
  'references',
  'reference',
  'dags',
  'dag',
  'dag_spec',
  'dag_search',
  'wiki',
  'wiki_page',
  'wiki_search',
  'workbook',
  'runs',
  'run',
  'run_logs',
  'step_log',
  'foreach_items',
  'foreach_item',
] as const;

export type ReadTarget = (typeof READ_TARGETS)[number];

/** Deprecated target names: accepted, never advertised. */
export const DEPRECATED_TARGET_ALIASES: Readonly<Record<string, ReadTarget>> = {
  docs: 'wiki',
  doc: 'wiki_page',
  doc_search: 'wiki_search',
};

export function isReadTarget(value: string): value is ReadTarget {
  return (READ_TARGETS as readonly string[]).includes(value);
}

/** The three reference URIs every successful result carries. */
export const RESULT_REFERENCES = [
  'dagu://reference/authoring',
  'dagu://reference/tools',
  'dagu://reference/notifications',
] as const;
