/**
 * Memory driven by a public key: 40 clients each send a 10 MB body at once. Request bodies in
 * memory are bounded (MAX_BODY_BYTES_IN_FLIGHT): the others wait, or after
 * REQUEST_BODY_TIMEOUT_MS get 503 with Retry-After. The process stays under the bound stated in
 * docs/limits.md, and every event of every 201 is stored (nothing of a refusal).
 */
import { expect, test } from 'bun:test';
import { peakRss } from '../helpers/service-process';
import { report, scenarioDir, sql, startService } from './harness';

/** What docs/limits.md states for the default settings: the process's peak resident memory. */
const MEMORY_BOUND_BYTES = 2.5 * 1024 ** 3;
const MiB = 1024 ** 2;
const CLIENTS = 40;
const EVENTS_PER_BODY = 9_000;

/** A body of just under 10 MiB (the default MAX_BODY_BYTES): events of about 1.1 KB, tagged with the client. */
function body(client: number): string {
  const pad = 'x'.repeat(1_050);
  const events = Array.from({ length: EVENTS_PER_BODY }, (_, i) => ({ type: 'track', event: 'large', userId: `client_${client}`, properties: { i, pad } }));
  return JSON.stringify({ events });
}

test('40 concurrent 10 MB bodies with a public key: memory under the stated bound, every 201 stored', async () => {
  const dir = scenarioDir('large-bodies');
  // The 40 clients come from one address here, as 40 would from 40 addresses: the whole budget is
  // theirs to share, not one address's share (MAX_BODY_BYTES_PER_ADDRESS) of it.
  const svc = await startService(dir, { MAX_BODY_BYTES_PER_ADDRESS: '33554432' });
  const before = peakRss(svc.proc.pid);
  const bodies = Array.from({ length: CLIENTS }, (_, i) => body(i));
  const t0 = performance.now();
  const answers = await Promise.all(
    bodies.map(async (text, client) => {
      const res = await fetch(`${svc.url}/events`, {
        method: 'POST',
        headers: { authorization: 'Bearer pk_fault_suite_public', 'content-type': 'application/json' },
        body: text,
      });
      await res.arrayBuffer();
      return { client, status: res.status, retryAfter: res.headers.get('retry-after') };
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const peak = peakRss(svc.proc.pid);
  const stored = new Map(
    (await sql(svc.url, "SELECT userId, count() AS n FROM events WHERE event = 'large' GROUP BY userId")).map((r: { userId: string; n: number }) => [r.userId, Number(r.n)]),
  );
  await svc.terminate();

  const accepted = answers.filter((a) => a.status === 201);
  report('large bodies', {
    clients: CLIENTS,
    bodyMiB: (bodies[0]!.length / MiB).toFixed(2),
    seconds: seconds.toFixed(1),
    answers: [...new Set(answers.map((a) => a.status))].map((s) => `${s}:${answers.filter((a) => a.status === s).length}`).join(' '),
    memoryAtStartMiB: Math.round(before / MiB),
    memoryPeakMiB: Math.round(peak / MiB),
    memoryBoundMiB: MEMORY_BOUND_BYTES / MiB,
  });

  expect(bodies[0]!.length).toBeLessThanOrEqual(10 * MiB);
  // Every request got an answer: stored, or refused with a time to come back.
  expect(answers.every((a) => a.status === 201 || (a.status === 503 && a.retryAfter !== null))).toBe(true);
  expect(accepted.length).toBeGreaterThan(0);
  expect(peak).toBeLessThan(MEMORY_BOUND_BYTES);
  for (const { client, status } of answers) expect({ client, stored: stored.get(`client_${client}`) ?? 0 }).toEqual({ client, stored: status === 201 ? EVENTS_PER_BODY : 0 });
}, 300_000);
