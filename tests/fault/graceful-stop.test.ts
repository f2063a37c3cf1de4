/**
 * SIGTERM while 64 connections send: the process exits 0 within SHUTDOWN_TIMEOUT_MS (plus the
 * time to commit what it accepted), and every request that got a 201 is stored; requests that
 * came too late are refused or find no server, never acknowledged and dropped.
 */
import { expect, test } from 'bun:test';
import { drive, mergeOutcomes, report, scaled, scenarioDir, startService, statusSummary, storedByTag, verify } from './harness';

const SHUTDOWN_TIMEOUT_MS = 5000;

test('SIGTERM under load: exit 0 in time, every 201 stored', async () => {
  const dir = scenarioDir('graceful-stop');
  const settings = { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) };
  const svc = await startService(dir, settings);
  // Mostly single events and small batches, some large ones: 64 connections in all.
  const loads = [
    drive(svc.url, { connections: 48, eventsPerRequest: 1 }),
    drive(svc.url, { connections: 12, eventsPerRequest: 50 }),
    drive(svc.url, { connections: 4, eventsPerRequest: 2000 }),
  ];
  await Bun.sleep(scaled(5000, 2000));
  const exit = await svc.terminate();
  const outcomes = mergeOutcomes(await Promise.all(loads.map((l) => l.stop())));

  const restarted = await startService(dir, settings, svc.port);
  const verdict = verify(outcomes, await storedByTag(restarted.url));
  report('graceful stop', { exitCode: exit.code, exitMs: Math.round(exit.ms), answers: statusSummary(outcomes), ...verdict });

  expect(exit.code).toBe(0);
  // Draining requests may take the whole timeout; committing what they carried comes after it.
  expect(exit.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 10_000);
  expect(verdict.acknowledged).toBeGreaterThan(0);
  expect(verdict).toMatchObject({ lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0 });
  // A request cut off by the stop is either stored whole or not at all (checked by `partial`).
  await restarted.terminate();
}, 300_000);
