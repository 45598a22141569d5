// Small statistics for the benchmark: percentiles of samples and median/min/max of repetitions.

/** Median, min and max of a figure over repetitions, with every sample. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

/** The p-th percentile (0..100) by nearest rank; NaN for no samples. */
export function percentile(values: number[], p: number): number {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Median (the mean of the two middle values for an even count), min and max, ignoring NaN. */
export function summarize(samples: number[]): Summary {
  const finite = samples.filter(Number.isFinite);
  if (finite.length === 0) return { median: NaN, min: NaN, max: NaN, samples };
  const s = [...finite].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1], samples };
}

/** Rounds to `digits` decimals, keeping NaN. */
export function round(v: number, digits = 2): number {
  if (!Number.isFinite(v)) return v;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
