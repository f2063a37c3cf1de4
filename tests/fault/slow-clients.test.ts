/**
 * Slow clients beside normal traffic: bodies sent one byte per second (cut with 408 after
 * REQUEST_BODY_TIMEOUT_MS), headers sent one byte per second and connections that send nothing
 * (cut by Bun's fixed limit before a first request), keep-alive connections left silent after a
 * request (cut after HTTP_IDLE_TIMEOUT_MS). Meanwhile normal requests are all served.
 */
import type { Socket } from 'bun';
import { expect, test } from 'bun:test';
import { percentile } from '../../bench/lib/stats';
import { drive, KEYS, report, scenarioDir, startService, statusSummary, storedByTag, verify } from './harness';

const BODY_TIMEOUT_MS = 3000;

interface SlowClient {
  /** ms from connecting to the first status line, and to the close. */
  answeredAfter?: number;
  closedAfter?: number;
  status?: string;
  socket: Socket<undefined>;
}

/** Connects, writes `first`, then one byte of `trickle` a second until the server closes the connection. */
async function slowClient(port: number, first: string, trickle: string): Promise<SlowClient> {
  const t0 = performance.now();
  let received = '';
  const client = {} as SlowClient;
  client.socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_s, data) {
        received += new TextDecoder().decode(data);
        client.answeredAfter ??= performance.now() - t0;
        client.status ??= /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      },
      close() {
        client.closedAfter = performance.now() - t0;
      },
    },
  });
  if (first) client.socket.write(first);
  (async () => {
    for (const byte of trickle) {
      await Bun.sleep(1000);
      if (client.closedAfter !== undefined) return;
      client.socket.write(byte);
    }
  })();
  return client;
}

const summary = (ms: number[]) => (ms.length ? `${Math.round(percentile(ms, 0.5))}/${Math.round(Math.max(...ms))}` : '-');

test('slow bodies get 408 and are cut, slow headers and idle connections are cut, others are served meanwhile', async () => {
  const dir = scenarioDir('slow-clients');
  // HTTP_IDLE_TIMEOUT_MS as shipped (10 s): a client reusing a keep-alive connection the very
  // moment the server closes it gets a reset, so the idle limit must stay well above the pauses
  // of a normal client.
  const svc = await startService(dir, { REQUEST_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) });
  const body = JSON.stringify({ events: [{ type: 'track', event: 'slow-client', properties: { pad: 'x'.repeat(100) } }] });
  const head = `POST /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEYS.public}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const slowBodies = await Promise.all(Array.from({ length: 64 }, () => slowClient(svc.port, head, body)));
  const slowHeaders = await Promise.all(Array.from({ length: 16 }, () => slowClient(svc.port, 'POST /events HTTP/1.1\r\n', `X-Slow: ${'a'.repeat(200)}`)));
  const idle = await Promise.all(Array.from({ length: 16 }, () => slowClient(svc.port, '', '')));
  const keptAlive = await Promise.all(Array.from({ length: 16 }, () => slowClient(svc.port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', '')));

  const load = drive(svc.url, { connections: 8, eventsPerRequest: 10, pauseMs: 10 });
  const all = [...slowBodies, ...slowHeaders, ...idle, ...keptAlive];
  // Normal requests timed one by one while the slow ones hold their connections.
  const timings: number[] = [];
  const deadline = performance.now() + 60_000;
  while (all.some((c) => c.closedAfter === undefined) && performance.now() < deadline) {
    const t0 = performance.now();
    const res = await fetch(`${svc.url}/`);
    await res.arrayBuffer();
    timings.push(performance.now() - t0);
    await Bun.sleep(20);
  }
  const allCut = all.every((c) => c.closedAfter !== undefined);
  const outcomes = await load.stop();
  for (const c of all) c.socket.terminate();
  const verdict = verify(outcomes, await storedByTag(svc.url));
  const stored = await fetch(`${svc.url}/events?event=slow-client&limit=0`, { headers: { authorization: `Bearer ${KEYS.private}` } }).then((r) => r.json() as Promise<{ total: number }>);

  report('slow clients', {
    slowBodyStatuses: [...new Set(slowBodies.map((c) => c.status ?? 'none'))].join(' '),
    slowBodyAnsweredMsP50Max: summary(slowBodies.flatMap((c) => c.answeredAfter ?? [])),
    slowBodyClosedMsP50Max: summary(slowBodies.flatMap((c) => c.closedAfter ?? [])),
    slowHeaderClosedMsP50Max: summary(slowHeaders.flatMap((c) => c.closedAfter ?? [])),
    slowHeaderStatuses: [...new Set(slowHeaders.map((c) => c.status ?? 'none'))].join(' '),
    idleClosedMsP50Max: summary(idle.flatMap((c) => c.closedAfter ?? [])),
    keptAliveStatuses: [...new Set(keptAlive.map((c) => c.status ?? 'none'))].join(' '),
    keptAliveClosedMsP50Max: summary(keptAlive.flatMap((c) => c.closedAfter ?? [])),
    stillOpen: all.filter((c) => c.closedAfter === undefined).length,
    normalAnswers: statusSummary(outcomes),
    healthP50Ms: percentile(timings, 0.5).toFixed(1),
    healthP99Ms: percentile(timings, 0.99).toFixed(1),
    slowEventsStored: stored.total,
    ...verdict,
  });

  expect(allCut).toBe(true);
  expect(slowBodies.every((c) => c.status === '408')).toBe(true);
  expect(keptAlive.every((c) => c.status === '200')).toBe(true);
  expect(stored.total).toBe(0);
  expect([...outcomes.statuses.keys()]).toEqual(['201']);
  expect(verdict).toMatchObject({ lost: 0, partial: 0 });
  await svc.terminate();
}, 300_000);
