import type { Subprocess } from 'bun';
import { readFileSync, realpathSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_THREADS } from '../../src/storage/engine-threads';

export const ROOT = join(import.meta.dir, '..', '..');

/** A port free at the moment of asking. */
export async function freePort(): Promise<number> {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() });
  const port = server.port!;
  await server.stop(true);
  return port;
}

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

async function start(args: string[], env: Record<string, string>, port: number, cwd = ROOT): Promise<Running> {
  const proc = Bun.spawn([process.execPath, ...args], { cwd, env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(url + '/', proc);
  return {
    url,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/**
 * The service as users run it (`npm start`: `bun src/main.ts` with its engine threads, settings
 * from .env.defaults), on `dataDir`; from `root`, this checkout unless another is given (another
 * commit's worktree, for a before-and-after comparison).
 */
export function startService(dataDir: string, port: number, env: Record<string, string> = {}, root = ROOT): Promise<Running> {
  const settings = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private };
  return start(['src/main.ts'], { ...settings, UV_THREADPOOL_SIZE: String(ENGINE_THREADS), ...env }, port, root);
}

/** A bare Bun server that parses the same request and answers as the service does (201 for /events, 200 for /v1/track). */
export function startBareServer(port: number): Promise<Running> {
  return start(['bench/baselines/bare-server.ts'], { PORT: String(port) }, port);
}

/**
 * Inserts the service has committed so far: the count of its `analytics_ingest_flush_rows`
 * histogram on `GET /metrics` (admin key). Each insert writes one new part per partition it
 * touches, so its rate is the rate at which the engine creates parts. NaN when the service has no
 * such metric (a commit older than it).
 */
export async function committedInserts(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${KEYS.private}` } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}: ${text.slice(0, 300)}`);
  if (!text.includes('analytics_ingest_flush_rows')) return NaN;
  let count = 0;
  for (const m of text.matchAll(/^analytics_ingest_flush_rows_count(?:\{[^}]*\})? (\S+)$/gm)) count += Number(m[1]);
  return count;
}

/** For cleanups on 'exit': an interrupt ends the process through them. */
export const exitOnSignal = () => process.exit(130);

function git(...args: string[]): string {
  const out = Bun.spawnSync(['git', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  if (out.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr.toString().trim()}`);
  return out.stdout.toString().trim();
}

/** The abbreviated commit `ref` names in this repository; throws when it names none. */
export const commitOf = (ref: string): string => git('rev-parse', '--short', `${ref}^{commit}`);

/**
 * A temporary detached worktree of `commit` at `dir` (with this checkout's node_modules linked
 * in), for running another commit's service beside this one's; `remove()` takes it away again,
 * as does the process's exit or an interrupt (Ctrl-C, SIGTERM) before then.
 */
export function worktreeOf(commit: string, dir: string): { remove(): void } {
  git('worktree', 'add', '--detach', dir, commit);
  const modules = join(dir, 'node_modules');
  const remove = () => {
    process.off('exit', remove).off('SIGINT', exitOnSignal).off('SIGTERM', exitOnSignal);
    try {
      unlinkSync(modules); // the link only, never what it points to
    } catch {
      // not made
    }
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      git('worktree', 'prune'); // its directory is gone already
    }
  };
  process.on('exit', remove).on('SIGINT', exitOnSignal).on('SIGTERM', exitOnSignal);
  try {
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), modules);
  } catch (err) {
    remove();
    throw err;
  }
  return { remove };
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
