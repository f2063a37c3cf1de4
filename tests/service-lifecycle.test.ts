import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServiceProcess } from './helpers/service-process';

const dataDir = mkdtempSync(join(tmpdir(), 'analytics-lifecycle-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const env = { DATA_DIR: dataDir, PUBLIC_API_KEYS: 'pk_lifecycle_test', PRIVATE_API_KEYS: 'sk_lifecycle_test' };
const send = (url: string, events: unknown[]) =>
  fetch(`${url}/events`, {
    method: 'POST',
    headers: { authorization: 'Bearer pk_lifecycle_test', 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  });

async function storedUuids(url: string): Promise<Set<string>> {
  const uuids = new Set<string>();
  for (let offset = 0; ; offset += 1000) {
    const res = await fetch(`${url}/events?limit=1000&offset=${offset}&orderByField=uuid`, { headers: { authorization: 'Bearer sk_lifecycle_test' } });
    const page = (await res.json()) as { results: Array<{ uuid: string }>; total: number };
    for (const e of page.results) uuids.add(e.uuid);
    if (offset + 1000 >= page.total) return uuids;
  }
}

describe('a service process', () => {
  const acknowledged = new Set<string>();

  test('on SIGTERM under load, stores every event it acknowledged and exits 0', async () => {
    const svc = await startServiceProcess(env);
    const batch = Array.from({ length: 50 }, (_, i) => ({ type: 'track', event: 'lifecycle', properties: { i } }));
    const outcomes: string[] = [];
    const inFlight = Array.from({ length: 40 }, async () => {
      try {
        const res = await send(svc.url, batch);
        outcomes.push(String(res.status));
        if (res.status === 201) for (const e of ((await res.json()) as any).results) acknowledged.add(e.uuid);
      } catch {
        outcomes.push('connection closed');
      }
    });
    // Stop as soon as the first batch is acknowledged, with the rest still in flight.
    while (acknowledged.size === 0) await Bun.sleep(1);
    svc.proc.kill('SIGTERM');
    await Promise.all(inFlight);
    expect(await svc.proc.exited).toBe(0);
    expect(acknowledged.size).toBeGreaterThan(0);
    for (const o of outcomes) expect(['201', '503', 'connection closed']).toContain(o);
    expect(svc.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });

  test('after a restart on the same DATA_DIR every acknowledged event is there, and new ones are accepted', async () => {
    const svc = await startServiceProcess(env);
    try {
      const stored = await storedUuids(svc.url);
      const missing = [...acknowledged].filter((u) => !stored.has(u));
      expect(missing).toEqual([]);
      expect((await send(svc.url, [{ type: 'page' }])).status).toBe(201);
      expect(svc.lines.filter((l) => l.includes('default workspace created'))).toEqual([]);
    } finally {
      svc.proc.kill('SIGTERM');
      await svc.proc.exited;
    }
  });
});

test('a second service on a port already in use does not start: it says so and exits 1; the first keeps answering', async () => {
  const first = await startServiceProcess(env);
  const otherDir = mkdtempSync(join(tmpdir(), 'analytics-second-'));
  try {
    const port = new URL(first.url).port;
    const second = startServiceProcess({ ...env, DATA_DIR: otherDir, PORT: port });
    const refused = await second.then(
      () => 'listening',
      (err: Error) => err.message,
    );
    expect(refused).toContain('service exited with 1');
    expect(refused).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect((await send(first.url, [{ type: 'track', event: 'still-here' }])).status).toBe(201);
  } finally {
    first.proc.kill('SIGTERM');
    await first.proc.exited;
    rmSync(otherDir, { recursive: true, force: true });
  }
});

test('the start log says where the service listens and where its console is: on every interface for HOST=0.0.0.0 (with a loopback URL, so labelled, to reach it), else on the address itself', async () => {
  const cases: Array<[string, (port: number) => Record<string, unknown>]> = [
    ['0.0.0.0', (port) => ({ host: '0.0.0.0', port, interfaces: 'all', loopbackUrl: `http://127.0.0.1:${port}` })],
    ['127.0.0.1', (port) => ({ host: '127.0.0.1', port, url: `http://127.0.0.1:${port}` })],
  ];
  for (const [host, expected] of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'analytics-host-'));
    const svc = await startServiceProcess({ ...env, DATA_DIR: dir, HOST: host });
    try {
      const listening = JSON.parse(svc.lines.find((l) => l.includes('"msg":"listening"'))!);
      const port = Number(new URL(svc.url).port);
      expect(listening).toEqual({ time: listening.time, level: 'info', msg: 'listening', ...expected(port), storage: 'embedded' });
      const consoleUrl = `http://127.0.0.1:${port}/console/`;
      // Asked first: the line follows 'listening' in the same write, read by the time this answers.
      expect((await fetch(consoleUrl)).headers.get('content-type')).toContain('text/html');
      const consoleLine = JSON.parse(svc.lines.find((l) => l.includes('"msg":"console at '))!);
      expect(consoleLine).toEqual({ time: consoleLine.time, level: 'info', msg: `console at ${consoleUrl}`, url: consoleUrl });
      expect((await fetch(`${svc.url}/`)).status).toBe(200);
    } finally {
      svc.proc.kill('SIGTERM');
      await svc.proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
