// Types of the architecture measures the unit tests call directly (scripts/arch-figures.mjs).
export function circlesOf(graph: Map<string, Array<{ to: string }>>): string[][];
export function functionsOf(key: string, text: string): Array<{ at: string; name: string; lines: number }>;
