/**
 * Clean-ups for when every test file has run. `bun test` emits no 'exit' event, so
 * `process.on('exit')` never fires there (temporary engine directories were left behind);
 * tests/preload.ts runs these from a global afterAll instead.
 */
const cleanups: Array<() => void> = [];

export function afterRun(cleanup: () => void): void {
  cleanups.push(cleanup);
}

export function runCleanups(): void {
  for (const cleanup of cleanups.splice(0)) cleanup();
}
