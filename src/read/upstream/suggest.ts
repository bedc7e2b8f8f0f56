/**
 * "Did you mean" for unknown DAG names: close existing names by edit distance (case-insensitive),
 * with the work bounded: long inputs get no suggestions, candidates whose length differs too much
 * are skipped, and each comparison stops as soon as it exceeds the allowed distance.
 */

const MAX_INPUT = 128;
const MAX_SUGGESTIONS = 5;

/** Allowed distance for a name of this length: 1 for short names, about a third for longer ones, at most 4. */
export function maxDistanceFor(length: number): number {
  return Math.max(1, Math.min(4, Math.floor(length / 3)));
}

/**
 * Edit distance of `a` and `b` counting insertions, deletions, substitutions and swaps of two
 * neighbouring characters (optimal string alignment), or `limit + 1` once it must exceed `limit`.
 */
export function boundedDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] ?? 0) + 1);
      }
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/**
 * Up to five existing names close to `input`: within the allowed edit distance, or one name
 * containing the other (case-insensitive, both at least three characters). Closest first, then by name.
 */
export function closeNames(input: string, candidates: Iterable<string>): string[] {
  const needle = input.toLowerCase();
  if (needle.length === 0 || needle.length > MAX_INPUT) return [];
  const limit = maxDistanceFor(needle.length);
  const scored: Array<{ name: string; score: number }> = [];
  const seen = new Set<string>();
  for (const name of candidates) {
    if (seen.has(name) || name === input) continue;
    seen.add(name);
    const hay = name.toLowerCase();
    let score = boundedDistance(needle, hay, limit);
    const contains =
      Math.min(needle.length, hay.length) >= 3 && (hay.includes(needle) || needle.includes(hay));
    if (score > limit && contains) score = limit + 0.5;
    if (score <= limit + 0.5) scored.push({ name, score });
  }
  scored.sort((x, y) => x.score - y.score || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return scored.slice(0, MAX_SUGGESTIONS).map((entry) => entry.name);
}
