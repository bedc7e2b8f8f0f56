// Types of the architecture measures the unit tests call directly (scripts/arch-figures.mjs).
export function circlesOf(graph: Map<string, Array<{ to: string }>>): string[][];
/** `table`: the body is one return of an object or array literal (a declarative table). */
export function functionsOf(
  key: string,
  text: string,
): Array<{ at: string; name: string; lines: number; table: boolean }>;
export function isTableBody(body: string[], indent: string): boolean;
