import type { Subprocess } from 'bun';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_THREADS } from '../../src/storage/engine-threads';

export const ROOT = join(import.meta.dir, '..', '..');

/** Keys of the service under benchmark. */
export const KEYS = { public: 'pk_bench_public_key', private: 'sk_bench_private_key' };

export interface Running {
  url: string;
  proc: Subprocess;
  stop(): Promise<void>;
}

async function waitUntilUp(url: string, proc: Subprocess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`${url}: the process exited with ${proc.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await Bun.sleep(50);
    }
  }
  throw new Error(`${url} did not come up`);
}

async function start(args: string[], env: Record<string, string>, port: number, path = '/'): Promise<Running> {
  const proc = Bun.spawn([process.execPath, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(url + path, proc);
  return {
    url,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** The service as users run it (`npm start`: `bun src/main.ts` with its engine threads, settings from .env.defaults), on `dataDir`. */
export function startService(dataDir: string, port: number, env: Record<string, string> = {}): Promise<Running> {
  const settings = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private };
  return start(['src/main.ts'], { ...settings, UV_THREADPOOL_SIZE: String(ENGINE_THREADS), ...env }, port);
}

/** A bare Bun server that parses the same request and answers 201. */
export function startBareServer(port: number): Promise<Running> {
  return start(['bench/baselines/bare-server.ts'], { PORT: String(port) }, port);
}

/** Runs a bench script to its end and answers what it printed last, as JSON. */
export async function runScript<T>(script: string, args: string[]): Promise<T> {
  const proc = Bun.spawn([process.execPath, script, ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`${script} failed`);
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}

/** Resident memory of a process, in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Samples a process's RSS every second until stopped. */
export function sampleRss(pid: number): { stop(): number[] } {
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(rssBytes(pid)), 1000);
  return {
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}
