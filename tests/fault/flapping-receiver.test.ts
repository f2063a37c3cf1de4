/**
 * Webhook receivers that flap for a minute, cycling through up, slow (past WEBHOOK_TIMEOUT_MS),
 * resetting connections, down (refusing connections) and answering 500, while events keep
 * coming: every matching event is delivered at least once, first deliveries in acceptance
 * order, to a batching and a non-batching webhook alike.
 */
import type { Socket, TCPSocketListener } from 'bun';
import { expect, test } from 'bun:test';
import { freePort } from '../fixtures/webhook-receiver';
import { api, drive, firstArrivalsInOrder, report, scaled, scenarioDir, startService, statusSummary, storedByTag, storedUuids, undeliveredCount, verify, waitUntil } from './harness';

const MODES = ['up', 'slow', 'reset', 'down', 'error'] as const;
type Mode = (typeof MODES)[number];
const WEBHOOK_TIMEOUT_MS = 1000;
const SLOW_MS = 1500;

interface Arrival {
  path: string;
  uuids: string[];
  /** Answered 200: the service was told it was delivered. */
  accepted: boolean;
}

/** A raw HTTP/1.1 receiver whose behaviour is switched with `mode`; it records each request that arrived whole. */
class FlappingReceiver {
  mode: Mode = 'up';
  readonly arrivals: Arrival[] = [];
  readonly answers = new Map<Mode, number>();
  private listener: TCPSocketListener<{ buffered: string }> | undefined;

  constructor(readonly port: number) {}

  listen(): void {
    this.listener ??= Bun.listen<{ buffered: string }>({
      hostname: '127.0.0.1',
      port: this.port,
      socket: {
        open: (socket) => void (socket.data = { buffered: '' }),
        data: (socket, bytes) => {
          socket.data.buffered += new TextDecoder().decode(bytes);
          this.takeRequests(socket);
        },
      },
    });
  }

  /** Stops listening and drops every open connection: new ones are refused. */
  close(): void {
    this.listener?.stop(true);
    this.listener = undefined;
  }

  setMode(mode: Mode): void {
    this.mode = mode;
    if (mode === 'down') this.close();
    else this.listen();
  }

  /** Unique event uuids a path accepted, in the order first accepted. */
  accepted(path: string): string[] {
    return this.arrivals.filter((a) => a.path === path && a.accepted).flatMap((a) => a.uuids);
  }

  private takeRequests(socket: Socket<{ buffered: string }>): void {
    for (;;) {
      const text = socket.data.buffered;
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = text.slice(0, headEnd);
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      // Byte length equals character length here: payloads are ASCII (uuids, names, numbers).
      if (text.length < headEnd + 4 + length) return;
      const body = text.slice(headEnd + 4, headEnd + 4 + length);
      socket.data.buffered = text.slice(headEnd + 4 + length);
      const path = head.split(' ')[1]!;
      const json = JSON.parse(body) as { data: Array<{ uuid: string }> };
      this.answer(socket, { path, uuids: json.data.map((e) => e.uuid), accepted: false });
    }
  }

  private answer(socket: Socket<{ buffered: string }>, arrival: Arrival): void {
    const mode = this.mode;
    this.answers.set(mode, (this.answers.get(mode) ?? 0) + 1);
    this.arrivals.push(arrival);
    const reply = (status: string) => socket.write(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\n\r\n`);
    if (mode === 'up') {
      arrival.accepted = true;
      reply('200 OK');
    } else if (mode === 'error') reply('500 Internal Server Error');
    else if (mode === 'reset') socket.terminate();
    else if (mode === 'slow') setTimeout(() => reply('200 OK'), SLOW_MS);
  }
}

test('receivers flapping (up, slow, resetting, down, 500) get every event at least once, in order', async () => {
  const dir = scenarioDir('flapping');
  const receiver = new FlappingReceiver(await freePort());
  receiver.listen();
  const retries = Array.from({ length: 30 }, (_, i) => (i < 3 ? `${200 * 2 ** i}ms` : '1s'));
  const svc = await startService(dir, {
    WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    WEBHOOK_RETRY_SCHEDULE: retries.join(','),
    // Every retry holds later events back: order is kept through every failure.
    WEBHOOK_BLOCKING_RETRIES: String(retries.length),
  });
  const base = `http://127.0.0.1:${receiver.port}`;
  const batched = await api(svc.url, 'POST', '/webhooks', { url: `${base}/batched`, enableBatching: true, eventNames: ['fault'] });
  const single = await api(svc.url, 'POST', '/webhooks', { url: `${base}/single`, enableBatching: false, eventNames: ['fault'] });

  const load = drive(svc.url, { connections: 2, eventsPerRequest: 3, pauseMs: 100, keepUuids: true });
  const seconds = scaled(60, 10);
  const phaseMs = 2000;
  for (let elapsed = 0, i = 0; elapsed < seconds * 1000; elapsed += phaseMs, i++) {
    receiver.setMode(MODES[i % MODES.length]!);
    await Bun.sleep(phaseMs);
  }
  receiver.setMode('up');
  const outcomes = await load.stop();
  const verdict = verify(outcomes, await storedByTag(svc.url));
  const stored = await storedUuids(svc.url);

  const t0 = performance.now();
  const complete = (path: string) => new Set(receiver.accepted(path)).size >= stored.length;
  await waitUntil(() => complete('/batched') && complete('/single'), 180_000, 100);
  const drainMs = performance.now() - t0;
  const failed = [
    ...(await api(svc.url, 'GET', `/webhooks/${batched.uuid}/deliveries?status=failed`)).results,
    ...(await api(svc.url, 'GET', `/webhooks/${single.uuid}/deliveries?status=failed`)).results,
  ];

  const figures: Record<string, string | number> = {
    seconds,
    answers: statusSummary(outcomes),
    acknowledged: verdict.acknowledged,
    lost: verdict.lost,
    receiverAnswers: [...receiver.answers].map(([k, v]) => `${k}:${v}`).join(' '),
    drainAfterLastFlapMs: Math.round(drainMs),
    failedDeliveries: failed.length,
  };
  const checks: Record<string, { undelivered: number; inOrder: boolean }> = {};
  for (const path of ['/batched', '/single']) {
    const accepted = receiver.accepted(path);
    const got = new Set(accepted);
    checks[path] = { undelivered: undeliveredCount(stored, accepted), inOrder: firstArrivalsInOrder(accepted, stored) };
    figures[`${path} delivered`] = got.size;
    figures[`${path} repeats`] = accepted.length - got.size;
    figures[`${path} undelivered`] = checks[path]!.undelivered;
    figures[`${path} inOrder`] = String(checks[path]!.inOrder);
  }
  report('flapping receivers', figures);

  expect(verdict).toMatchObject({ lost: 0, partial: 0 });
  expect(stored.length).toBe(verdict.acknowledged);
  expect(failed).toEqual([]);
  for (const path of ['/batched', '/single']) expect(checks[path]).toEqual({ undelivered: 0, inOrder: true });
  await svc.terminate();
  receiver.close();
}, 600_000);
