/**
 * The ClickHouse server fails under the service while clients send: it is killed (connections
 * refused) and later frozen (requests hang past CLICKHOUSE_REQUEST_TIMEOUT_MS), then comes back.
 * Requests meanwhile get 503, nothing is stored in part, the service recovers by itself, and the
 * webhook delivers every stored event, in order, without gaps.
 *
 * The embedded engine runs inside the service's own process: a failure of it is a crash of the
 * service, which crash.test.ts covers.
 */
import type { Subprocess } from 'bun';
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { freePort, startWebhookReceiver } from '../fixtures/webhook-receiver';
import { api, drive, firstArrivalsInOrder, mergeOutcomes, report, scaled, scenarioDir, startService, statusSummary, storedByTag, storedUuids, undeliveredCount, verify, waitUntil } from './harness';

const REQUEST_TIMEOUT_MS = 2000;

/** The fixture server in a process of its own, on `port`, over `dataDir`. */
async function startServer(dataDir: string, port: number): Promise<Subprocess> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, 'clickhouse-server.ts'), dataDir, String(port)], { stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('ready')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the ClickHouse fixture exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return proc;
}

test('the ClickHouse server killed and frozen: 503s meanwhile, nothing half-written, recovery, no delivery gaps', async () => {
  const dir = scenarioDir('storage-faults');
  const dataDir = join(dir, 'clickhouse');
  const port = await freePort();
  let server = await startServer(dataDir, port);
  const receiver = await startWebhookReceiver();
  const svc = await startService(dir, {
    CLICKHOUSE_URL: `http://127.0.0.1:${port}`,
    CLICKHOUSE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s',
    WEBHOOK_BLOCKING_RETRIES: '12',
  });
  await api(svc.url, 'POST', '/webhooks', { url: receiver.url, enableBatching: true, eventNames: ['fault'] });

  const loads = [drive(svc.url, { connections: 8, eventsPerRequest: 50, pauseMs: 10 }), drive(svc.url, { connections: 8, eventsPerRequest: 1, pauseMs: 5 })];
  const answersSoFar = () => mergeOutcomes(loads.map((l) => l.outcomes));
  const phases: Array<{ name: string; ms: number; before?: () => Promise<void> }> = [
    { name: 'up', ms: scaled(3000, 1500) },
    { name: 'killed', ms: scaled(4000, 2000), before: async () => { server.kill('SIGKILL'); await server.exited; } },
    { name: 'restarted', ms: scaled(4000, 2500), before: async () => { server = await startServer(dataDir, port); } },
    { name: 'frozen', ms: scaled(2 * REQUEST_TIMEOUT_MS + 1000, REQUEST_TIMEOUT_MS + 1000), before: async () => { server.kill('SIGSTOP'); } },
    { name: 'thawed', ms: scaled(5000, 3000), before: async () => { server.kill('SIGCONT'); } },
  ];
  const phaseAnswers: Record<string, string> = {};
  for (const phase of phases) {
    await phase.before?.();
    const before = answersSoFar().statuses;
    await Bun.sleep(phase.ms);
    const after = answersSoFar().statuses;
    phaseAnswers[phase.name] = [...after].map(([k, v]) => `${k}:${v - (before.get(k) ?? 0)}`).join(' ');
  }
  // Recovered: after the last fault, requests are acknowledged again.
  const lastAnswers = loads.map((l) => l.outcomes.statuses.get('201') ?? 0);
  const recovered = await waitUntil(() => loads.every((l, i) => (l.outcomes.statuses.get('201') ?? 0) > lastAnswers[i]! + 10), 10_000);
  const outcomes = mergeOutcomes(await Promise.all(loads.map((l) => l.stop())));

  const verdict = verify(outcomes, await storedByTag(svc.url));
  const stored = await storedUuids(svc.url);
  await waitUntil(() => new Set(receiver.events().map((e) => e.uuid)).size >= stored.length, 60_000);
  const arrivals = receiver.events().map((e) => e.uuid as string);
  const undelivered = undeliveredCount(stored, arrivals);
  report('storage faults', { ...Object.fromEntries(Object.entries(phaseAnswers).map(([k, v]) => [`answers ${k}`, v])), answers: statusSummary(outcomes), ...verdict, storedEvents: stored.length, undelivered });

  const statuses = [...outcomes.statuses.keys()];
  expect(statuses.filter((s) => s !== '201' && s !== '503')).toEqual([]);
  expect(outcomes.statuses.get('503') ?? 0).toBeGreaterThan(0);
  expect(recovered).toBe(true);
  expect(verdict).toMatchObject({ lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0 });
  expect(undelivered).toBe(0);
  expect(firstArrivalsInOrder(arrivals, stored)).toBe(true);
  await svc.terminate();
  server.kill('SIGKILL');
  await receiver.stop();
}, 300_000);
