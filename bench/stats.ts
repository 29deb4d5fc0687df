/** The figures the benchmarks report: medians, percentiles, and milliseconds as printed. */

/** The middle value (the upper one of an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The value below which p % of `sorted` (ascending) lie. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** One decimal below 10, whole above. */
export const round = (n: number) => (n < 10 ? n.toFixed(1) : String(Math.round(n)));
