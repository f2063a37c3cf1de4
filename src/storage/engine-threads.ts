/**
 * Native engine calls (every chdb statement) run on the runtime's worker pool. Under Bun that pool
 * has as many threads as the machine has cores (2 on a small server) unless UV_THREADPOOL_SIZE
 * says otherwise, and it reads the variable once, when the process starts: a statement waits for
 * a free thread, so two long statements on a 2-core machine hold up every other one, of every
 * workspace, and ingestion. Deno's pool is not bounded that way (measured: docs/performance.md).
 */

/** What `npm start`, the Docker image and the tests' service processes set. */
export const ENGINE_THREADS = 64;

/** Threads the runtime runs engine calls on, or undefined when it does not bound them (Deno). */
export function engineThreads(env: Record<string, string | undefined> = process.env): number | undefined {
  if (typeof Bun === 'undefined') return undefined;
  const configured = Number(env.UV_THREADPOOL_SIZE);
  return Number.isInteger(configured) && configured > 0 ? configured : navigator.hardwareConcurrency;
}

/** Engine sessions that may each run a statement at once: the pool needs a thread for each. */
export function engineSessions(config: { ingestWriters: number; engineReadSessions: number; queryConcurrency: number }): number {
  // A sandbox has two sessions (checking and running) but uses one at a time.
  return config.ingestWriters + config.engineReadSessions + config.queryConcurrency;
}
