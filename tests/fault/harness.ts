/**
 * What the fault suite shares: the real service as a separate process (killed, stopped and
 * restarted at will), load that tags every request so that what was stored can be checked
 * request by request, and the figures each scenario prints.
 */
import type { Subprocess } from 'bun';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_THREADS } from '../../src/storage/engine-threads';
import { freePort } from '../fixtures/webhook-receiver';
import { afterRun } from '../helpers/after-run';
import { PROJECT_ROOT } from '../helpers/project-root';

export const KEYS = { public: 'pk_fault_suite_public', private: 'sk_fault_suite_private' };

/** `FAULT_SCALE=short` (CI) runs each scenario briefly; the default runs them in full. */
export const SHORT = process.env.FAULT_SCALE === 'short';
export const scaled = (full: number, short: number) => (SHORT ? short : full);

/** A directory for one scenario (the service's data and log), removed after the run. */
export function scenarioDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fault-${name}-`));
  afterRun(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface ServiceProcess {
  url: string;
  port: number;
  proc: Subprocess;
  /** Sends SIGKILL and waits for the process to be gone. */
  kill(): Promise<void>;
  /** Sends SIGTERM; answers the exit code and how long the process took to exit. */
  terminate(): Promise<{ code: number; ms: number }>;
}

/** The last lines the service logged in `dir`, for a failure message. */
export function logTail(dir: string, lines = 40): string {
  const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');
  return (read(join(dir, 'service.log')) + read(join(dir, 'service.err.log'))).split('\n').slice(-lines).join('\n');
}

/** The environment of `bun src/main.ts` with its data in `<dir>/data`: .env.defaults, then these, then `env`. */
function serviceEnv(dir: string, port: number, env: Record<string, string>): Record<string, string | undefined> {
  return {
    ...process.env,
    DATA_DIR: join(dir, 'data'),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    PUBLIC_API_KEYS: KEYS.public,
    PRIVATE_API_KEYS: KEYS.private,
    // As `npm start` runs it: enough engine threads for every session (src/storage/engine-threads.ts).
    UV_THREADPOOL_SIZE: String(ENGINE_THREADS),
    // The scenarios' webhook receivers listen on loopback.
    EGRESS_ALLOWLIST: '127.0.0.0/8',
    // Verification reads every stored tag back in one statement.
    QUERY_MAX_RESULT_ROWS: '10000000',
    QUERY_MAX_RESULT_BYTES: '1073741824',
    ...env,
  };
}

/** Resolves once the service at `url` answers `GET /`; fails as soon as `exited()` says how it ended. */
async function untilServing(url: string, dir: string, exited: () => string | null): Promise<void> {
  for (let i = 0; ; i++) {
    const how = exited();
    if (how !== null) throw new Error(`the service exited ${how}:\n${logTail(dir)}`);
    if (i > 1200) throw new Error(`the service did not come up:\n${logTail(dir)}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      await Bun.sleep(50);
    }
  }
}

/**
 * `bun src/main.ts` with its data in `<dir>/data` (settings from .env.defaults and `env`),
 * appending its log to `<dir>/service.log`; resolves once it answers `GET /`. Pass the previous
 * port to restart on the same address.
 */
export async function startService(dir: string, env: Record<string, string> = {}, port?: number): Promise<ServiceProcess> {
  const listenOn = port ?? (await freePort());
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: PROJECT_ROOT,
    env: serviceEnv(dir, listenOn, env),
    stdout: Bun.file(join(dir, 'service.log')),
    stderr: Bun.file(join(dir, 'service.err.log')),
  });
  const url = `http://127.0.0.1:${listenOn}`;
  await untilServing(url, dir, () => (proc.exitCode === null ? null : `with ${proc.exitCode}`));
  return {
    url,
    port: listenOn,
    proc,
    async kill() {
      proc.kill('SIGKILL');
      await proc.exited;
    },
    async terminate() {
      const t0 = performance.now();
      proc.kill('SIGTERM');
      const code = await proc.exited;
      return { code, ms: performance.now() - t0 };
    },
  };
}

/** Fields of /proc/<pid>/stat after the command: state (Z: a zombie, exited and not yet reaped), parent, process group, ...; undefined once the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  } catch {
    return undefined;
  }
}

export const processState = (pid: number): string | undefined => statFields(pid)?.[0];

export interface UnreapedService {
  url: string;
  port: number;
  pid: number;
  /** SIGKILL to the service's process group; returns at once, without waiting for anything. */
  killGroup(): void;
  /** Ends the parent that never reaped the service (and the service, if it still runs). */
  reap(): Promise<void>;
}

/**
 * The service as a supervisor leaves it until it waits for it: the leader of a process group of
 * its own (setsid), whose parent is a shell that became `sleep` and never reaps it. Once killed,
 * it stays a zombie, its id still answering kill(pid, 0), until `reap()`. Its log goes to
 * `<dir>/service.log` as with `startService`.
 */
export async function startUnreapedService(dir: string, env: Record<string, string> = {}, port?: number): Promise<UnreapedService> {
  const listenOn = port ?? (await freePort());
  const parent = Bun.spawn(['sh', '-c', 'setsid "$0" src/main.ts >>"$1" 2>>"$2" & echo $!; exec sleep 86400 >/dev/null', process.execPath, join(dir, 'service.log'), join(dir, 'service.err.log')], {
    cwd: PROJECT_ROOT,
    env: serviceEnv(dir, listenOn, env),
    stdout: 'pipe',
  });
  const pid = Number(await new Response(parent.stdout).text());
  let reaped = false;
  const reap = async () => {
    if (reaped) return;
    reaped = true;
    if (processState(pid) !== undefined && processState(pid) !== 'Z') process.kill(-pid, 'SIGKILL');
    parent.kill('SIGKILL');
    await parent.exited;
  };
  afterRun(() => void reap());
  const url = `http://127.0.0.1:${listenOn}`;
  await untilServing(url, dir, () => (processState(pid) === 'Z' ? '(its exit code not collected)' : null));
  // setsid forks when its caller leads a group already: then `pid` would not be the service.
  if (statFields(pid)?.[2] !== String(pid)) throw new Error(`process ${pid} does not lead a process group of its own`);
  return { url, port: listenOn, pid, killGroup: () => process.kill(-pid, 'SIGKILL'), reap };
}

/**
 * Service-side latency (ms) of each request it logged, by status: needs LOG_LEVEL=debug. Unlike
 * times taken by the clients, it leaves out the load generator's own delays.
 */
export function loggedLatencies(dir: string): Map<number, number[]> {
  const byStatus = new Map<number, number[]>();
  for (const line of readFileSync(join(dir, 'service.log'), 'utf8').split('\n')) {
    if (!line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { status: number; ms: number };
    const list = byStatus.get(entry.status);
    if (list) list.push(entry.ms);
    else byStatus.set(entry.status, [entry.ms]);
  }
  return byStatus;
}

/** What happened to each tagged request. */
export interface Outcomes {
  /** Tags of requests answered 201, with how many events each carried. */
  acked: Map<string, number>;
  /** Tags of requests answered with a refusal (4xx/5xx): none of their events may be stored. */
  refused: Map<string, number>;
  /**
   * Tags of requests whose outcome the client cannot know: no answer came (connection cut). All
   * or none of their events may be stored.
   */
  unknown: Map<string, number>;
  /** Count of answers by status ('error' when no answer came). */
  statuses: Map<string, number>;
  /** The uuids the 201 of each request gave its events, when asked to keep them. */
  uuids: Map<string, string[]>;
  /** Requests sent and not yet answered. */
  inFlight: number;
}

export const newOutcomes = (): Outcomes => ({ acked: new Map(), refused: new Map(), unknown: new Map(), statuses: new Map(), uuids: new Map(), inFlight: 0 });

let tagCounter = 0;
/** A tag no other request of this run carries. */
export const newTag = () => `r${process.pid}_${++tagCounter}`;

const TAG_SLOT = '\u0000TAG';
const bodyParts = new Map<number, string[]>();

/**
 * The body of a request of `n` events tagged `tag` in `properties.r` (each with its index in
 * `properties.i`). Built from a cached template: the load generator shares two cores with the
 * service, so it must cost little.
 */
export function taggedBody(n: number, tag: string): string {
  let parts = bodyParts.get(n);
  if (!parts) {
    const events = Array.from({ length: n }, (_, i) => ({ type: 'track', event: 'fault', userId: `u${i % 50}`, properties: { r: TAG_SLOT, i } }));
    parts = JSON.stringify({ events }).split(JSON.stringify(TAG_SLOT).slice(1, -1));
    bodyParts.set(n, parts);
  }
  return parts.join(tag);
}

const countStatus = (outcomes: Outcomes, key: string) => outcomes.statuses.set(key, (outcomes.statuses.get(key) ?? 0) + 1);

/** Sends one tagged request of `n` events and records its outcome; answers the status ('error' when none came). */
export async function sendTagged(url: string, outcomes: Outcomes, n: number, options: { keepUuids?: boolean } = {}): Promise<string> {
  const tag = newTag();
  outcomes.inFlight++;
  try {
    const res = await fetch(`${url}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.public}`, 'content-type': 'application/json' },
      body: taggedBody(n, tag),
    });
    const body = await res.text();
    countStatus(outcomes, String(res.status));
    if (res.status === 201) {
      outcomes.acked.set(tag, n);
      if (options.keepUuids) outcomes.uuids.set(tag, (JSON.parse(body) as { results: Array<{ uuid: string }> }).results.map((e) => e.uuid));
    } else {
      outcomes.refused.set(tag, n);
    }
    return String(res.status);
  } catch {
    countStatus(outcomes, 'error');
    outcomes.unknown.set(tag, n);
    return 'error';
  } finally {
    outcomes.inFlight--;
  }
}

export interface DriveOptions {
  connections: number;
  eventsPerRequest: number;
  /** Wait after each request, per connection. */
  pauseMs?: number;
  keepUuids?: boolean;
}

/** Clients sending tagged requests, each connection one at a time, until `stop()`. */
export function drive(url: string, options: DriveOptions, outcomes = newOutcomes()) {
  let running = true;
  const loops = Array.from({ length: options.connections }, async () => {
    while (running) {
      await sendTagged(url, outcomes, options.eventsPerRequest, options);
      if (options.pauseMs) await Bun.sleep(options.pauseMs);
    }
  });
  return {
    outcomes,
    async stop(): Promise<Outcomes> {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** Merges the outcomes of several rounds of load into one. */
export function mergeOutcomes(all: Outcomes[]): Outcomes {
  const merged = newOutcomes();
  for (const o of all) {
    for (const key of ['acked', 'refused', 'unknown', 'uuids'] as const) for (const [k, v] of o[key]) (merged[key] as Map<string, unknown>).set(k, v);
    for (const [k, v] of o.statuses) merged.statuses.set(k, (merged.statuses.get(k) ?? 0) + v);
  }
  return merged;
}

/** POST/GET against the service with the private key; answers the parsed JSON, failing unless 2xx. */
export async function api(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${KEYS.private}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** Rows of one SQL statement run through `POST /queries`. */
export async function sql(url: string, statement: string): Promise<any[]> {
  const body = await api(url, 'POST', '/queries', { queries: [statement] });
  return body.results[0].results;
}

/** For each request tag stored: how many events carry it, and how many distinct indexes. */
export async function storedByTag(url: string): Promise<Map<string, { rows: number; distinct: number }>> {
  const rows = await sql(
    url,
    "SELECT JSONExtractString(properties, 'r') AS r, count() AS n, uniqExact(JSONExtractInt(properties, 'i')) AS d FROM events WHERE event = 'fault' GROUP BY r",
  );
  return new Map(rows.map((row: { r: string; n: number; d: number }) => [row.r, { rows: Number(row.n), distinct: Number(row.d) }]));
}

/** The uuids of every stored `fault` event, in acceptance order (the order webhooks deliver in). */
export async function storedUuids(url: string): Promise<string[]> {
  const rows = await sql(url, "SELECT toString(uuid) AS uuid FROM events WHERE event = 'fault' ORDER BY parsedAt");
  return rows.map((row: { uuid: string }) => row.uuid);
}

/** How many of `stored` are not among `arrivals`. */
export function undeliveredCount(stored: readonly string[], arrivals: readonly string[]): number {
  const received = new Set(arrivals);
  return stored.filter((uuid) => !received.has(uuid)).length;
}

export interface Verdict {
  acknowledged: number;
  found: number;
  lost: number;
  /** Requests stored in part: an insert is all or nothing, so this must be 0. */
  partial: number;
  /** Events stored more than once: must be 0 (no client here retries). */
  duplicated: number;
  /** Refused requests of which something was stored: must be 0. */
  storedDespiteRefusal: number;
  /** Requests of unknown outcome (no answer, or a 503 saying so), and of those, the ones stored whole. */
  unknownOutcome: number;
  unknownOutcomeStored: number;
}

/** Compares what was stored with what each request was told. */
export function verify(outcomes: Outcomes, stored: Map<string, { rows: number; distinct: number }>): Verdict {
  const v: Verdict = { acknowledged: 0, found: 0, lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0, unknownOutcome: outcomes.unknown.size, unknownOutcomeStored: 0 };
  const check = (tag: string, n: number) => {
    const s = stored.get(tag) ?? { rows: 0, distinct: 0 };
    v.duplicated += s.rows - s.distinct;
    if (s.distinct !== 0 && s.distinct !== n) v.partial++;
    return s.distinct;
  };
  for (const [tag, n] of outcomes.acked) {
    v.acknowledged += n;
    v.found += check(tag, n);
  }
  for (const [tag, n] of outcomes.unknown) if (check(tag, n) === n) v.unknownOutcomeStored++;
  for (const [tag, n] of outcomes.refused) if (check(tag, n) > 0) v.storedDespiteRefusal++;
  v.lost = v.acknowledged - v.found;
  return v;
}

/** Answer counts by status, for a report: `201:1200 503:40 error:3`. */
export const statusSummary = (outcomes: Outcomes) =>
  [...outcomes.statuses].sort().map(([k, v]) => `${k}:${v}`).join(' ');

/** One line of figures, prefixed so the suite's output can be searched. */
export function report(scenario: string, figures: Record<string, string | number>): void {
  console.log(`FIGURES ${scenario}: ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(', ')}`);
}

/**
 * Polls `condition` every `everyMs` until it holds or `limitMs` passes; answers whether it held.
 * (Unlike tests/helpers' `eventually`, not holding is an outcome here, not a failure.)
 */
export async function waitUntil(condition: () => boolean, limitMs: number, everyMs = 20): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await Bun.sleep(everyMs);
  }
  return true;
}

/**
 * Whether the first arrival of each event at a receiver came in `order` (acceptance order):
 * repeats (at-least-once) are allowed, going back to an event never delivered before is not.
 */
export function firstArrivalsInOrder(arrivals: readonly string[], order: readonly string[]): boolean {
  const seen = new Set<string>();
  const firsts = arrivals.filter((uuid) => !seen.has(uuid) && seen.add(uuid));
  const expected = order.filter((uuid) => seen.has(uuid));
  return firsts.length === expected.length && firsts.every((uuid, i) => uuid === expected[i]);
}
