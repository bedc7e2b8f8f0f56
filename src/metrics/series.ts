import type { Histogram } from 'prom-client';

/**
 * Histogram series bound once per label set. prom-client's `observe(labels, value)` (and its `labels()`
 * child alike) builds a record, checks the labels and joins them into a key on every call (~10 objects
 * a call). Here a label set's series is found once, by its values, and each later observation updates
 * that series in place: the same sum, count and bucket a plain `observe` would change. The fields used
 * (`hashMap`, `upperBounds`, a series' `sum`, `count` and `bucketValues`) are prom-client 15's;
 * test/unit/metrics/series.test.ts holds the exposition equal to prom-client's own `observe`.
 */

interface HistogramSeries {
  labels: Record<string, string | number>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface HistogramInternals {
  hashMap: Record<string, HistogramSeries>;
  upperBounds: readonly number[];
}

/** The values of a label set, in the histogram's label order; `undefined` leaves a label out. */
export type LabelValues = ReadonlyArray<string | undefined>;

/** Records observations of one label set of `histogram` (not one with exemplars: those keep `observe`). */
export function boundSeries<T extends string>(
  histogram: Histogram<T>,
  labelNames: readonly T[],
  values: LabelValues,
): (value: number) => void {
  const internals = histogram as unknown as HistogramInternals;
  const labels: Partial<Record<T, string>> = {};
  labelNames.forEach((name, index) => {
    const value = values[index];
    if (value !== undefined) labels[name] = value;
  });
  const matches = (series: HistogramSeries) =>
    labelNames.every((name) => series.labels[name] === labels[name]);
  // A bucket's key is its bound as a string: made once here, not from the number on each observation.
  const bounds = internals.upperBounds;
  const keys = bounds.map(String);
  let map: HistogramInternals['hashMap'] | undefined;
  let series: HistogramSeries | undefined;
  return (value) => {
    // reset() replaces the map: the series is found again after it.
    if (series === undefined || map !== internals.hashMap) {
      histogram.observe(labels, value);
      map = internals.hashMap;
      series = Object.values(map).find(matches);
      return;
    }
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    series.sum += value;
    series.count += 1;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        const key = keys[i]!;
        series.bucketValues[key] = (series.bucketValues[key] ?? 0) + 1;
        return;
      }
    }
  };
}

type Record1 = (value: number) => void;
type Level = Map<string | undefined, Level | Record1>;

function childLevel(level: Level, key: string | undefined): Level {
  let next = level.get(key) as Level | undefined;
  if (next === undefined) {
    next = new Map();
    level.set(key, next);
  }
  return next;
}

/**
 * The bound series of each label set, looked up by its values (up to five, in the histogram's label
 * order) through one Map per label: no key string, no record, no argument array per call. The label
 * values must be bounded (metrics.ts bounds every one).
 */
export function seriesCache<T extends string>(
  histogram: Histogram<T>,
  labelNames: readonly T[],
): (v0?: string, v1?: string, v2?: string, v3?: string, v4?: string) => Record1 {
  const n = labelNames.length;
  if (n < 1 || n > 5) throw new Error('seriesCache takes one to five labels');
  const root: Level = new Map();
  return (v0, v1, v2, v3, v4) => {
    let level = root;
    if (n > 1) level = childLevel(level, v0);
    if (n > 2) level = childLevel(level, v1);
    if (n > 3) level = childLevel(level, v2);
    if (n > 4) level = childLevel(level, v3);
    const last = n === 1 ? v0 : n === 2 ? v1 : n === 3 ? v2 : n === 4 ? v3 : v4;
    let record = level.get(last) as Record1 | undefined;
    if (record === undefined) {
      record = boundSeries(histogram, labelNames, [v0, v1, v2, v3, v4]);
      level.set(last, record);
    }
    return record;
  };
}
