/**
 * The ClickHouse server fails under the service while clients send: it is killed (connections
 * refused) and later frozen (requests hang past CLICKHOUSE_REQUEST_TIMEOUT_MS), then comes back.
 * The ingest log rides it out: requests meanwhile wait for the server up to INGEST_READ_WAIT_MS
 * (INGEST_ACK=loaded, the default with a server), then are answered 201 with their events safe in
 * the log; nothing is refused, nothing is stored in part or twice, the service loads the backlog
 * by itself once the server is back, and the webhook delivers every stored event, in order,
 * without gaps.
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

test('the ClickHouse server killed and frozen: collection goes on through the ingest log, nothing half-written or doubled, recovery, no delivery gaps', async () => {
  const dir = scenarioDir('storage-faults');
  const dataDir = join(dir, 'clickhouse');
  const port = await freePort();
  let server = await startServer(dataDir, port);
  const receiver = await startWebhookReceiver();
  const svc = await startService(dir, {
    CLICKHOUSE_URL: `http://127.0.0.1:${port}`,
    CLICKHOUSE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    INGEST_READ_WAIT_MS: '1000',
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

  expect([...outcomes.statuses.keys()]).toEqual(['201']);
  expect(recovered).toBe(true);
  expect(verdict).toMatchObject({ lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0 });
  expect(undelivered).toBe(0);
  expect(firstArrivalsInOrder(arrivals, stored)).toBe(true);
  await svc.terminate();
  server.kill('SIGKILL');
  await receiver.stop();
}, 300_000);
