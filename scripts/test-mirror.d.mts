// Types of the test-mirror measures the unit tests call directly (scripts/test-mirror.mjs).
export const KINDS: readonly string[];
export function exemption(source: string): 'type-only' | 're-export' | undefined;
export function mirrorsOf(key: string, testFiles: readonly string[]): string[];
export function mirrorFigures(root?: string): {
  modules: number;
  mirrored: Record<string, string[]>;
  exempt: Record<string, 'type-only' | 're-export'>;
  unmirrored: string[];
};
export function strayHelpers(root?: string): string[];
