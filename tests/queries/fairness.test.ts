/**
 * One workspace's slow SQL does not hold up another's, nor ingestion. The service runs as its
 * own process, launched as `npm start` launches it (with its engine threads: see
 * src/storage/engine-threads.ts), since the runtime's worker pool is fixed when a process starts.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process';

/** About 1.5 seconds of engine time that costs no CPU: 30 rows, each sleeping 50 ms. */
const SLOW = 'SELECT sum(sleepEachRow(0.05)) AS s FROM numbers(30)';
const ADMIN = 'sk_fairness_admin';

const dataDir = mkdtempSync(join(tmpdir(), 'analytics-fairness-'));
let svc: ServiceProcess;
const keys = { A: '', B: '' };

async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(svc.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

beforeAll(async () => {
  svc = await startServiceProcess({ DATA_DIR: dataDir, PUBLIC_API_KEYS: 'pk_fairness_public', PRIVATE_API_KEYS: ADMIN, QUERY_WORKSPACE_QUEUE_MAX: '2' });
  for (const name of ['A', 'B'] as const) {
    const created = await call('POST', '/workspaces', ADMIN, { name: `fairness ${name}` });
    keys[name] = created.body.privateApiKey;
    expect((await call('POST', '/events', created.body.publicApiKey, { events: [{ type: 'track', event: name }] })).status).toBe(201);
  }
});
afterAll(async () => {
  svc.proc.kill('SIGTERM');
  await svc.proc.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs `sql` as `key`, and records in `done` when it answered. */
function timed(done: string[], label: string, key: string, sql: string) {
  const started = performance.now();
  return call('POST', '/queries', key, { queries: [sql] }).then((res) => {
    done.push(label);
    return { ...res, ms: performance.now() - started };
  });
}

test("workspace B's short statement is not queued behind workspace A's two long ones", async () => {
  const done: string[] = [];
  const a1 = timed(done, 'A1', keys.A, SLOW);
  const a2 = timed(done, 'A2', keys.A, SLOW);
  await Bun.sleep(300);
  const b = await timed(done, 'B', keys.B, 'SELECT count() AS n FROM events');
  console.log(`B's SELECT count() FROM events answered in ${b.ms.toFixed(1)} ms while A's two ~1.5 s statements were running or waiting`);
  expect(b.status).toBe(200);
  expect(b.body.results[0].results).toEqual([{ n: 1 }]);
  const [r1, r2] = await Promise.all([a1, a2]);
  expect([r1.status, r2.status]).toEqual([200, 200]);
  // B answered before either of A's statements: it did not wait behind them.
  expect(done).toEqual(['B', 'A1', 'A2']);
  console.log(`A's statements answered after ${r1.ms.toFixed(0)} and ${r2.ms.toFixed(0)} ms (one after the other: one running statement per workspace)`);
});

test('ingestion and listing go on while two workspaces each run a long statement', async () => {
  const done: string[] = [];
  const a = timed(done, 'A', keys.A, SLOW);
  const b = timed(done, 'B', keys.B, SLOW);
  await Bun.sleep(300);
  const started = performance.now();
  expect((await call('POST', '/events', ADMIN, { events: [{ type: 'track', event: 'during' }] })).status).toBe(201);
  done.push('insert');
  expect((await call('GET', '/events?event=during', ADMIN)).body.total).toBe(1);
  done.push('listing');
  console.log(`POST /events then GET /events took ${(performance.now() - started).toFixed(1)} ms while A and B each ran a ~1.5 s statement`);
  await Promise.all([a, b]);
  expect(done.slice(0, 2)).toEqual(['insert', 'listing']);
});

test("a workspace whose queue is full gets 429 with Retry-After; another workspace does not", async () => {
  const running = [timed([], 'A', keys.A, SLOW), timed([], 'A', keys.A, SLOW), timed([], 'A', keys.A, SLOW)];
  await Bun.sleep(300);
  const refused = await call('POST', '/queries', keys.A, { queries: ['SELECT 1'] });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.body.detail).toContain('at most 2 may wait');
  expect((await call('POST', '/queries', keys.B, { queries: ['SELECT 1 AS one'] })).status).toBe(200);
  expect((await Promise.all(running)).map((r) => r.status)).toEqual([200, 200, 200]);
});
