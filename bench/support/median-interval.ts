/**
 * A distribution-free confidence interval of a median: for `n` independent samples, the k-th smallest and the k-th
 * largest bound the population's median with probability `1 - 2·P(B ≤ k - 1)`, B ~ Binomial(n, ½). The benchmarks
 * use it on per-pair ratios (each pair run side by side), so that a target is judged on how far the median of many
 * pairs can be from the truth, not on one run's median.
 */

/** The interval and its exact coverage (at least the level asked for, or the widest there is when `n` is too small). */
export interface MedianInterval {
  readonly low: number;
  readonly high: number;
  /** The probability that the interval holds the population's median (independent samples). */
  readonly coverage: number;
}

/** P(B ≤ j) for B ~ Binomial(n, ½), for each j in 0..n. */
const halfBinomialCdf = (n: number): number[] => {
  const cdf: number[] = [];
  let term = 2 ** -n; // C(n, 0) / 2^n
  let sum = 0;
  for (let j = 0; j <= n; j++) {
    sum += term;
    cdf.push(sum);
    term = (term * (n - j)) / (j + 1);
  }
  return cdf;
};

/**
 * The narrowest order-statistic interval of the median of `xs` whose coverage is at least `level` (default 0.9); with
 * too few samples for that, the whole range and its coverage.
 */
export const medianInterval = (xs: readonly number[], level = 0.9): MedianInterval => {
  if (xs.length === 0) throw new RangeError('medianInterval: no samples');
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  const cdf = halfBinomialCdf(n);
  let k = 1;
  while (k + 1 <= Math.ceil(n / 2) && 1 - 2 * cdf[k]! >= level) k++;
  return { low: sorted[k - 1]!, high: sorted[n - k]!, coverage: 1 - 2 * cdf[k - 1]! };
};
