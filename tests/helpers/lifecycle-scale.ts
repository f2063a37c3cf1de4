/**
 * Events in the volume tests of export (100,000 in `npm test`) and import (20,000: each line
 * goes through the service's validation), and 1,000,000 for both, the acceptance figure, in
 * `npm run test:lifecycle`, which sets LIFECYCLE_EVENTS.
 */
export const LIFECYCLE_EVENTS = Number(process.env.LIFECYCLE_EVENTS ?? 100_000);
export const LIFECYCLE_IMPORT_LINES = Number(process.env.LIFECYCLE_EVENTS ?? 20_000);

/** Samples the process's resident memory every few ms while `work` runs; answers the peak in MiB. */
export async function peakRssDuring<T>(work: () => Promise<T>): Promise<{ result: T; peakMiB: number; beforeMiB: number }> {
  const mib = () => process.memoryUsage().rss / 1024 / 1024;
  const beforeMiB = mib();
  let peakMiB = beforeMiB;
  const timer = setInterval(() => (peakMiB = Math.max(peakMiB, mib())), 20);
  try {
    const result = await work();
    return { result, peakMiB: Math.max(peakMiB, mib()), beforeMiB };
  } finally {
    clearInterval(timer);
  }
}

/** The bytes of a streamed answer and its lines, counted as they arrive (nothing is kept). */
export async function countStreamed(res: Response, onChunk?: (chunk: Uint8Array) => void): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body!) {
    bytes += chunk.byteLength;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    onChunk?.(chunk);
  }
  return { bytes, lines };
}
