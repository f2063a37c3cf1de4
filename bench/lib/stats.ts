/** The value below which `p` (0..1) of the sorted samples fall. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export const median = (samples: readonly number[]) => percentile(samples, 0.5);

/** The least-squares slope of evenly spaced samples, per sample. */
export function slope(samples: readonly number[]): number {
  const n = samples.length;
  const meanX = (n - 1) / 2;
  const meanY = samples.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  samples.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  return den === 0 ? 0 : num / den;
}

/** A rate such as 56,214/s, or a duration in ms with the precision it deserves. */
export const rate = (n: number) => `${Math.round(n).toLocaleString('en-US')}/s`;
export const ms = (n: number) => (Number.isNaN(n) ? 'n/a' : n < 10 ? `${n.toFixed(2)} ms` : n < 100 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);
export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/**
 * Times each of `runs` in turn, `iterations` times after `warmups` rounds of warm-up, so that the
 * machine's drift weighs on all of them alike: each run's samples, ms.
 */
export async function timeInTurn(runs: ReadonlyArray<() => Promise<unknown>>, iterations: number, warmups = 2): Promise<number[][]> {
  const samples = runs.map((): number[] => []);
  for (let i = -warmups; i < iterations; i++) {
    for (const [k, run] of runs.entries()) {
      const t0 = performance.now();
      await run();
      if (i >= 0) samples[k]!.push(performance.now() - t0);
    }
  }
  return samples;
}
