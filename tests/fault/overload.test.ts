/**
 * Offered load several times what the service can commit: 256 connections each sending
 * 1000-event batches back to back, ignoring Retry-After. The service keeps answering, sheds
 * what it cannot take with 503 + Retry-After, stays under a memory bound, and stores every
 * event it acknowledged.
 */
import { expect, test } from 'bun:test';
import { rssBytes } from '../../bench/lib/processes';
import { percentile } from '../../bench/lib/stats';
import { drive, loggedLatencies, report, scaled, scenarioDir, startService, statusSummary, storedByTag, verify } from './harness';

/** Resident memory the service may reach under this load: its queue (100,000 events) and the bodies in flight. */
const MEMORY_BOUND_BYTES = 2.5 * 1024 ** 3;
const MiB = 1024 ** 2;

test('overload: answers, sheds with 503 + Retry-After, bounded memory, every 201 stored', async () => {
  const dir = scenarioDir('overload');
  // LOG_LEVEL=debug: the service logs each request's latency (accepted collection at debug), read back for the figures.
  const svc = await startService(dir, { LOG_LEVEL: 'debug' });
  const pid = svc.proc.pid;
  let peak = rssBytes(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 100);

  // A light client beside the flood, one event every 100 ms: it must keep getting answers.
  const probe: Array<{ status: number; retryAfter: string | null }> = [];
  let probing = true;
  const probeLoop = (async () => {
    while (probing) {
      const res = await fetch(`${svc.url}/events`, {
        method: 'POST',
        headers: { authorization: 'Bearer pk_fault_suite_public', 'content-type': 'application/json' },
        body: '{"events":[{"type":"track","event":"probe"}]}',
      });
      await res.arrayBuffer();
      probe.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
      await Bun.sleep(100);
    }
  })();

  const seconds = scaled(30, 5);
  const t0 = performance.now();
  const load = drive(svc.url, { connections: 256, eventsPerRequest: 1000 });
  await Bun.sleep(seconds * 1000);
  const outcomes = await load.stop();
  const elapsed = (performance.now() - t0) / 1000;
  probing = false;
  await probeLoop;
  clearInterval(sampler);

  const verdict = verify(outcomes, await storedByTag(svc.url));
  const requests = [...outcomes.statuses.values()].reduce((a, b) => a + b, 0);
  const shed = outcomes.statuses.get('503') ?? 0;
  const offered = requests * 1000;
  await svc.terminate();
  const latencies = loggedLatencies(dir);
  const quantile = (status: number, q: number) => {
    const samples = latencies.get(status) ?? [];
    return samples.length ? percentile(samples, q).toFixed(1) : '-';
  };
  report('overload', {
    seconds: Math.round(elapsed),
    answers: statusSummary(outcomes),
    offeredEventsPerSecond: Math.round(offered / elapsed),
    acceptedEventsPerSecond: Math.round(verdict.acknowledged / elapsed),
    shedRate: `${((100 * shed) / requests).toFixed(1)}%`,
    shedP50Ms: quantile(503, 0.5),
    shedP99Ms: quantile(503, 0.99),
    acceptedP50Ms: quantile(201, 0.5),
    acceptedP99Ms: quantile(201, 0.99),
    probeAnswers: `201:${probe.filter((p) => p.status === 201).length} 503:${probe.filter((p) => p.status === 503).length}`,
    memoryPeakMiB: Math.round(peak / MiB),
    memoryBoundMiB: MEMORY_BOUND_BYTES / MiB,
    ...verdict,
  });

  // Every request had an answer; what was not taken was refused with a time to come back.
  expect(outcomes.statuses.get('error') ?? 0).toBe(0);
  expect([...outcomes.statuses.keys()].sort()).toEqual(shed > 0 ? ['201', '503'] : ['201']);
  expect(probe.every((p) => p.status === 201 || (p.status === 503 && p.retryAfter !== null))).toBe(true);
  expect(peak).toBeLessThan(MEMORY_BOUND_BYTES);
  expect(verdict.acknowledged).toBeGreaterThan(0);
  expect(verdict).toMatchObject({ lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0 });
}, 300_000);
