import type { Subprocess } from 'bun';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_THREADS } from '../../src/storage/engine-threads';
import { PROJECT_ROOT } from './project-root';

export type Runtime = 'bun' | 'deno';

/** How each runtime starts the service, as `npm start` and `npm run start:deno` do, with `preload` run first. */
const COMMANDS: Record<Runtime, (preload: string[]) => string[]> = {
  bun: (preload) => [process.execPath, ...preload.flatMap((file) => ['--preload', file]), 'src/main.ts'],
  deno: (preload) => [join(PROJECT_ROOT, 'node_modules', '.bin', 'deno'), 'run', '--allow-all', ...preload.flatMap((file) => ['--preload', file]), 'src/main.ts'],
};

export interface ServiceProcessOptions {
  /** The service's wall clock starts at this time (ms since 1970) instead of now: tests/helpers/clock-preload.ts. */
  clockAt?: number;
}

/** `TEST_RUNTIME=deno` runs the services the tests start under Deno; Bun is the default. */
export const TEST_RUNTIME: Runtime = (() => {
  const runtime = process.env.TEST_RUNTIME || 'bun';
  if (runtime !== 'bun' && runtime !== 'deno') throw new Error(`TEST_RUNTIME must be bun or deno, not ${runtime}`);
  return runtime;
})();

export interface ServiceProcess {
  url: string;
  /** The ClickHouse interface's own port, when CLICKHOUSE_INTERFACE_PORT opened one. */
  clickhousePort?: number;
  proc: Subprocess<'ignore', 'pipe', 'inherit'>;
  /** Every log line printed so far. */
  lines: string[];
}

/**
 * Starts the service as its own process (its own engine) under `runtime` and waits until it
 * listens. `onLine` sees each log line as it is printed.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  runtime: Runtime = TEST_RUNTIME,
  onLine?: (line: string) => void,
  options: ServiceProcessOptions = {},
): Promise<ServiceProcess> {
  const clock = options.clockAt === undefined ? undefined : { file: join(PROJECT_ROOT, 'tests', 'helpers', 'clock-preload.ts'), at: String(options.clockAt) };
  const proc = Bun.spawn(COMMANDS[runtime](clock ? [clock.file] : []), {
    cwd: PROJECT_ROOT,
    // UV_THREADPOOL_SIZE as `npm start` sets it (src/storage/engine-threads.ts).
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', UV_THREADPOOL_SIZE: String(ENGINE_THREADS), ...(clock ? { TEST_CLOCK_AT: clock.at } : {}), ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const lines: string[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  let resolveListening!: (entry: { url: string; clickhousePort?: number }) => void;
  const listening = new Promise<{ url: string; clickhousePort?: number }>((r) => (resolveListening = r));
  (async () => {
    for await (const chunk of proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        onLine?.(line);
        const entry = JSON.parse(line) as { msg: string; url?: string; loopbackUrl?: string; clickhousePort?: number };
        if (entry.msg === 'listening') resolveListening({ url: (entry.url ?? entry.loopbackUrl)!, clickhousePort: entry.clickhousePort });
      }
    }
  })();
  const started = await Promise.race([listening, proc.exited.then((code) => Promise.reject(new Error(`service exited with ${code}: ${lines.join('\n')}`)))]);
  return { ...started, proc, lines };
}

/** Sets a process's peak resident memory back to what it holds now (Linux's clear_refs), to measure the peak of what follows. */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** A process's peak resident memory so far (the kernel's high-water mark). */
export function peakRss(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}
