import { describe, test } from 'bun:test';
import type { Subprocess } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger, LogFields, LogLevel } from '../../src/log';
import type { Service } from '../../src/service';
import { afterRun } from './after-run';
import { startServiceProcess, TEST_RUNTIME } from './service-process';

/** The services the tests start run as Deno processes, not in the test process. */
export const SERVED_BY_DENO = TEST_RUNTIME === 'deno';

let dataRoot: string | undefined;
/**
 * The engine binds one data directory per process and two processes must not share one, so each
 * Deno service gets its own (the test process may hold the shared ENGINE_DIR). A restart given
 * the same settings reuses it.
 */
export function denoDataDir(): string {
  if (!dataRoot) {
    const root = (dataRoot = mkdtempSync(join(tmpdir(), 'analytics-deno-')));
    afterRun(() => rmSync(root, { recursive: true, force: true }));
  }
  return mkdtempSync(join(dataRoot, 'service-'));
}

/** Deno services still running when the tests end (a failed test skips its stop) are killed. */
const running = new Set<Subprocess>();
afterRun(() => {
  for (const proc of running) proc.kill('SIGKILL');
});

function inProcessOnly(name: string): never {
  throw new Error(`svc.${name} lives in the service's own process: a test that uses it cannot run under TEST_RUNTIME=deno`);
}

/**
 * The service started with `deno run` and `settings` as its environment. Tests reach it over
 * HTTP; its log lines go to `log`. The in-process objects (storage, buffer, store, webhooks)
 * are in the Deno process: touching them fails the test with a message saying so.
 */
export async function startDenoService(settings: Record<string, string>, log: Logger): Promise<Service> {
  const forward = (line: string) => {
    const { level, msg, time: _time, ...fields } = JSON.parse(line) as { level: LogLevel; msg: string; time: string } & LogFields;
    log[level](msg, fields);
  };
  const { url, clickhousePort, proc } = await startServiceProcess(settings, 'deno', forward);
  running.add(proc);
  const stop = async () => {
    proc.kill('SIGTERM');
    const code = await proc.exited;
    running.delete(proc);
    if (code !== 0) throw new Error(`the Deno service exited with ${code}`);
  };
  let stopping: Promise<void> | undefined;
  return {
    url,
    port: Number(new URL(url).port),
    clickhousePort,
    get storage() {
      return inProcessOnly('storage');
    },
    get buffer() {
      return inProcessOnly('buffer');
    },
    get store() {
      return inProcessOnly('store');
    },
    get visits() {
      return inProcessOnly('visits');
    },
    get webhooks() {
      return inProcessOnly('webhooks');
    },
    get streams() {
      return inProcessOnly('streams');
    },
    stop: () => (stopping ??= stop()),
  };
}

/**
 * For tests that need the service in the test process: they read its storage, store or
 * webhooks, or run several services over one embedded engine at once (the engine locks its
 * directory to one process, and a Deno service is a process of its own). Skipped under
 * TEST_RUNTIME=deno.
 */
export const testInProcess = test.skipIf(SERVED_BY_DENO);
export const describeInProcess = describe.skipIf(SERVED_BY_DENO);
