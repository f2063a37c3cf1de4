/**
 * Three API processes over one ClickHouse server (the HTTP fixture over chDB), as in a scale-out
 * deployment: they elect the webhook delivery owner, see each other's workspace changes, and
 * share messageId de-duplication. Real engine, real HTTP servers, real processes; waits are
 * bounded polls on outcomes, and the measured takeover and propagation times are printed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startClickHouseFixture, type ClickHouseFixture } from '../fixtures/clickhouse-http-fixture';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { join } from 'node:path';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process';

const PUBLIC_KEY = 'public-scale-out-key';
const ADMIN_KEY = 'private-scale-out-key';
/** Shorter than the default (6000) to keep the test short; the bound scales with it. */
const LEASE_MS = 3000;
const CHANGE_POLL_MS = 250;
/** A stated bound is lease + a third + the claim's settle (1/10) + round trips; the polls allow twice that. */
const TAKEOVER_LIMIT_MS = 2 * LEASE_MS * (1 + 1 / 3 + 1 / 10) + 5000;

let fixture: ClickHouseFixture;
let receiver: WebhookReceiver;
const processes: ServiceProcess[] = [];
let env: Record<string, string>;

async function call(p: ServiceProcess, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(p.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const running = (p: ServiceProcess) => p.proc.exitCode === null && !p.proc.signalCode;

/** The running process that logged the latest `lease acquired`, and when (its log's time). */
function ownership(): { p: ServiceProcess; term: number; at: number } | undefined {
  let best: { p: ServiceProcess; term: number; at: number } | undefined;
  for (const p of processes.filter(running)) {
    for (const line of p.lines) {
      const entry = JSON.parse(line) as { msg: string; term?: number; time?: string };
      if (entry.msg === 'lease acquired' && (!best || entry.term! > best.term)) best = { p, term: entry.term!, at: Date.parse(entry.time!) };
    }
  }
  return best;
}
const owner = () => ownership()?.p;

beforeAll(async () => {
  fixture = await startClickHouseFixture(ENGINE_DIR);
  receiver = await startWebhookReceiver();
  env = {
    CLICKHOUSE_URL: fixture.url,
    META_DATABASE: uniqueName('meta_scale'),
    DEFAULT_WORKSPACE_DATABASE: uniqueName('default_scale'),
    PUBLIC_API_KEYS: PUBLIC_KEY,
    PRIVATE_API_KEYS: ADMIN_KEY,
    WEBHOOK_DELIVERY: 'auto',
    WEBHOOK_LEASE_MS: String(LEASE_MS),
    WORKSPACE_CHANGE_POLL_MS: String(CHANGE_POLL_MS),
    WORKSPACE_REFRESH_MS: '1000',
    EGRESS_ALLOWLIST: '127.0.0.0/8',
    LOG_LEVEL: 'info',
  };
  // One after the other: the first start creates the metadata and the default workspace.
  for (let i = 0; i < 3; i++) processes.push(await startOne());
});

/** A process of its own DATA_DIR (its ingest log), over the shared server. */
const startOne = () => startServiceProcess({ ...env, DATA_DIR: join(ENGINE_DIR, uniqueName('process')) });

afterAll(async () => {
  for (const p of processes) p.proc.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.proc.exited));
  await receiver?.stop();
  await fixture?.stop();
});

describe('three processes over one ClickHouse server', () => {
  test('the webhook owner is killed mid-stream: another takes over; every event is delivered, in order, none twice (but the request in flight at the kill, again with its webhook-id)', async () => {
    await eventually('one process holds the delivery lease', async () => owner() !== undefined, TAKEOVER_LIMIT_MS);
    const first = owner()!;
    const others = processes.filter((p) => p !== first);
    const hook = await call(others[0]!, 'POST', '/webhooks', ADMIN_KEY, { url: `${receiver.url}/hook` });
    expect(hook.status).toBe(200);
    // The owner starts the webhook's actor at its next webhook refresh, from the cursor saved at creation.
    const total = 60;
    // Events are accepted by both other processes in turn: the owner reads them from the table.
    let killedAt = 0;
    let requestsAtKill = 0;
    for (let i = 0; i < total; i++) {
      const sent = await call(others[i % 2]!, 'POST', '/events', PUBLIC_KEY, { events: [{ type: 'track', event: `e${i}` }] });
      expect(sent.status).toBe(201);
      if (i === 20) {
        await eventually('deliveries are under way', async () => receiver.events().length >= 5, TAKEOVER_LIMIT_MS);
        requestsAtKill = receiver.requests.length;
        killedAt = Date.now();
        first.proc.kill('SIGKILL');
        await first.proc.exited;
      }
      await Bun.sleep(50);
    }
    await eventually('another process holds the lease', async () => owner() !== undefined && owner() !== first, TAKEOVER_LIMIT_MS);
    const takeoverMs = ownership()!.at - killedAt;
    await eventually(
      'every event is delivered',
      async () => new Set(receiver.events().map((e) => e.event)).size === total,
      TAKEOVER_LIMIT_MS + 30_000,
    );
    // Delivered once each, in acceptance order. A repeat may only be the request that was in
    // flight when the owner died, sent again with the same webhook-id (at-least-once; receivers
    // de-duplicate by it), never a second delivery under another id.
    const byId = new Map<string, string[]>();
    const order: string[] = [];
    let resent = 0;
    for (const r of receiver.requests) {
      const id = r.headers['webhook-id']!;
      const names = (r.json.data as any[]).map((e) => e.event as string);
      if (byId.has(id)) {
        expect(byId.get(id)).toEqual(names);
        resent++;
        continue;
      }
      byId.set(id, names);
      order.push(...names);
    }
    expect(order).toEqual(Array.from({ length: total }, (_, i) => `e${i}`));
    expect(resent).toBeLessThanOrEqual(1);
    console.log(`scale-out: owner killed after ${requestsAtKill} requests; new owner elected ${takeoverMs} ms after the kill (lease ${LEASE_MS} ms); requests sent again with the same webhook-id: ${resent}`);
    // A replacement joins, as an orchestrator would start one: three processes again.
    processes.push(await startOne());
  });

  test('a workspace deleted through one process is refused by the others', async () => {
    const [a, b, c] = processes.filter(running);
    expect(c).toBeDefined();
    const created = await call(a!, 'POST', '/workspaces', ADMIN_KEY, { name: uniqueName('Shared') });
    expect(created.status).toBe(200);
    const key = created.json.privateApiKey as string;
    await eventually('the others know the new workspace', async () => (await call(b!, 'GET', '/events', key)).status === 200 && (await call(c!, 'GET', '/events', key)).status === 200);
    expect((await call(a!, 'DELETE', `/workspaces/${created.json.workspaceId}`, ADMIN_KEY)).status).toBe(200);
    const deletedAt = performance.now();
    const refusedAfter: number[] = [];
    for (const other of [b!, c!]) {
      await eventually('the deleted workspace is refused', async () => (await call(other, 'GET', '/events', key)).status === 401, 10_000);
      refusedAfter.push(Math.round(performance.now() - deletedAt));
    }
    expect((await call(b!, 'GET', `/workspaces/${created.json.workspaceId}`, ADMIN_KEY)).status).toBe(404);
    console.log(`scale-out: deleted workspace refused by the other processes within ${refusedAfter.join(' and ')} ms (poll ${CHANGE_POLL_MS} ms)`);
  });

  test('a messageId repeated through another process is stored once', async () => {
    const [a, b] = processes.filter(running);
    const messageId = `m-${crypto.randomUUID()}`;
    const event = { type: 'track', event: 'dedup-across', messageId };
    expect((await call(a!, 'POST', '/events', PUBLIC_KEY, { events: [event] })).status).toBe(201);
    expect((await call(b!, 'POST', '/events', PUBLIC_KEY, { events: [event] })).status).toBe(201);
    expect((await call(a!, 'POST', '/events', PUBLIC_KEY, { events: [event] })).status).toBe(201);
    const listed = await call(b!, 'GET', '/events?event=dedup-across', ADMIN_KEY);
    expect(listed.status).toBe(200);
    expect(listed.json.total).toBe(1);
  });
});
