import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile } from './stats';

/** One POST to send over and over. */
export interface LoadRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface LoadResult {
  /** Requests answered with a 2xx per second. */
  okPerSecond: number;
  /** Requests answered otherwise (or not at all), in all. */
  failures: number;
  /**
   * Requests of a fixed rate (`atRate`) never sent, because as many as it allows were waiting for
   * their answers: the generator's own limit on a machine it shares, not answers of the service.
   */
  unsent?: number;
  p50Ms: number;
  p99Ms: number;
}

/** wrk when the machine has it (it costs the server far less CPU), else a load generator in Bun. */
export const generator: 'wrk' | 'bun' = Bun.which('wrk') ? 'wrk' : 'bun';

const LATENCY = /^\s+(50|99)(?:\.000)?%\s+([\d.]+)(us|ms|s)$/;
const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

/** A wrk script that sends `req`, in a directory of its own to delete afterwards. */
function wrkScript(req: LoadRequest): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const lines = ['wrk.method = "POST"', `wrk.body = ${JSON.stringify(req.body)}`];
  for (const [k, v] of Object.entries(req.headers)) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  const path = join(dir, 'request.lua');
  writeFileSync(path, lines.join('\n'));
  return { dir, path };
}

async function runWrk(req: LoadRequest, connections: number, seconds: number): Promise<LoadResult> {
  const script = wrkScript(req);
  const proc = Bun.spawn(['wrk', '-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script.path, req.url], { stdout: 'pipe', stderr: 'pipe' });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  rmSync(script.dir, { recursive: true, force: true });
  const latency: Record<string, number> = {};
  for (const line of out.split('\n')) {
    const m = LATENCY.exec(line);
    if (m) latency[m[1]!] = Number(m[2]) * UNIT_MS[m[3]!]!;
  }
  // "36642 requests in 1.00m", or "in 15.01s", or "in 900.12ms".
  const summary = /(\d+) requests in ([\d.]+)(ms|s|m)\b/.exec(out);
  const total = Number(summary?.[1] ?? NaN);
  const elapsed = summary ? Number(summary[2]) * { ms: 0.001, s: 1, m: 60 }[summary[3] as 'ms' | 's' | 'm'] : seconds;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  if (Number.isNaN(total)) throw new Error(`could not read wrk's output:\n${out}`);
  return { okPerSecond: (total - non2xx) / elapsed, failures: non2xx + errors, p50Ms: latency['50'] ?? NaN, p99Ms: latency['99'] ?? NaN };
}

/** Closed loop: `connections` clients each sending the next request when the last is answered. */
async function runBunClosed(req: LoadRequest, connections: number, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let failures = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const res = await fetch(req.url, { method: 'POST', body: req.body, headers: req.headers });
          await res.arrayBuffer();
          if (res.ok) ok++;
          else failures++;
        } catch {
          failures++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { okPerSecond: ok / elapsed, failures, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}

/** The highest rate `connections` clients reach, each waiting for its answer (closed loop). */
export function maxRate(req: LoadRequest, connections: number, seconds: number): Promise<LoadResult> {
  return generator === 'wrk' ? runWrk(req, connections, seconds) : runBunClosed(req, connections, seconds);
}

/**
 * Open loop at a fixed rate: requests are sent on schedule whether or not earlier ones were
 * answered (up to `maxInFlight`), and latency counts from when a request was due, so a stall
 * shows in the figures instead of slowing the sender.
 */
export async function atRate(req: LoadRequest, perSecond: number, seconds: number, maxInFlight = 512): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let failures = 0;
  let unsent = 0;
  let inFlight = 0;
  const interval = 1000 / perSecond;
  const started = performance.now();
  const total = Math.floor(perSecond * seconds);
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    if (inFlight >= maxInFlight) {
      unsent++;
      continue;
    }
    inFlight++;
    pending.push(
      fetch(req.url, { method: 'POST', body: req.body, headers: req.headers })
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.ok) ok++;
          else failures++;
        })
        .catch(() => void failures++)
        .finally(() => {
          inFlight--;
          latencies.push(performance.now() - due);
        }),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - started) / 1000;
  return { okPerSecond: ok / elapsed, failures, unsent, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}
