/**
 * The ingest log's lock against crashes and strangers, with the real service: SIGKILL to the
 * service's process group and a restart at once on the same data directory, again and again,
 * while the killed process is still a zombie (its parent has not reaped it); a lock file naming
 * a live process that does not hold the log; and a second live service on the same log, which
 * must still be refused.
 */
import { expect, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  drive,
  mergeOutcomes,
  newOutcomes,
  processState,
  report,
  scaled,
  scenarioDir,
  sendTagged,
  startService,
  startUnreapedService,
  storedByTag,
  verify,
  type Outcomes,
} from './harness';

const lockOf = (dir: string) => join(dir, 'data', 'ingest-log', 'lock');

test('SIGKILL to the process group and a restart at once, again and again: every restart starts beside the zombie it left, nothing acknowledged is lost', async () => {
  const dir = scenarioDir('lock-restart');
  const restarts = scaled(8, 4);
  const rounds: Outcomes[] = [];
  const restartMs: number[] = [];
  const lockNamedTheKilled: boolean[] = [];
  const killedWasZombie: boolean[] = [];
  let svc = await startUnreapedService(dir);
  for (let i = 0; i < restarts; i++) {
    const load = drive(svc.url, { connections: 8, eventsPerRequest: 20 });
    await Bun.sleep(scaled(1500, 800));
    const killed = svc;
    killed.killGroup();
    const t0 = performance.now();
    // Spawned before anything is awaited: the killed process has not even been seen to die.
    const next = startUnreapedService(dir, {}, killed.port);
    lockNamedTheKilled.push(readFileSync(lockOf(dir), 'utf8') === String(killed.pid));
    rounds.push(await load.stop());
    svc = await next;
    restartMs.push(Math.round(performance.now() - t0));
    // Its parent never reaped it: it was a zombie, answering kill(pid, 0), the whole time.
    killedWasZombie.push(processState(killed.pid) === 'Z' && process.kill(killed.pid, 0));
    await killed.reap();
  }
  const verdict = verify(mergeOutcomes(rounds), await storedByTag(svc.url));
  report('ingest log lock: SIGKILL to the group, restart at once', {
    restarts,
    started: restartMs.length,
    restartMs: restartMs.join(' '),
    lockNamedTheKilled: lockNamedTheKilled.filter(Boolean).length,
    killedWasZombie: killedWasZombie.filter(Boolean).length,
    ...verdict,
  });
  await svc.reap();

  expect(restartMs.length).toBe(restarts);
  expect(killedWasZombie.every(Boolean)).toBe(true);
  expect(lockNamedTheKilled.every(Boolean)).toBe(true);
  expect(verdict.acknowledged).toBeGreaterThan(0);
  expect(verdict).toMatchObject({ lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0 });
}, 300_000);

test('a lock file naming a live process that does not hold the log (a process id reused after a crash or a reboot) does not keep the service from starting', async () => {
  const dir = scenarioDir('lock-stranger');
  mkdirSync(join(dir, 'data', 'ingest-log'), { recursive: true });
  const stranger = Bun.spawn(['sleep', '60']);
  // The holder's process id as text: what this release writes, and what earlier ones wrote.
  writeFileSync(lockOf(dir), String(stranger.pid));
  const svc = await startService(dir);
  const outcomes = newOutcomes();
  const status = await sendTagged(svc.url, outcomes, 5);
  const stored = await storedByTag(svc.url);
  const lock = readFileSync(lockOf(dir), 'utf8');
  await svc.terminate();
  const strangerAlive = stranger.exitCode === null;
  stranger.kill();
  await stranger.exited;
  report('ingest log lock: a live stranger named in the lock file', { stranger: stranger.pid, strangerAlive: String(strangerAlive), status, lockNow: lock, service: svc.proc.pid });

  expect(strangerAlive).toBe(true);
  expect(status).toBe('201');
  expect(lock).toBe(String(svc.proc.pid));
  expect(verify(outcomes, stored)).toMatchObject({ acknowledged: 5, found: 5 });
});

test('a second service on the same ingest log while the first lives is refused, naming the first', async () => {
  const dir = scenarioDir('lock-first');
  const first = await startService(dir);
  // A data directory of its own (the engine would refuse a shared one first), the first's log.
  const t0 = performance.now();
  const refusal = await startService(scenarioDir('lock-second'), { INGEST_LOG_DIR: join(dir, 'data', 'ingest-log') }).then(
    async (second) => {
      await second.terminate();
      return 'the second service started';
    },
    (err: Error) => err.message,
  );
  const refusedMs = Math.round(performance.now() - t0);
  const firstServes = (await fetch(first.url)).ok;
  await first.terminate();
  report('ingest log lock: a second live service', { refusedMs, firstServes: String(firstServes), refusal: /"msg":"start failed".*/.exec(refusal)?.[0] ?? refusal });

  expect(refusal).toContain('the service exited with 1');
  expect(refusal).toContain(`the ingest log in ${join(dir, 'data', 'ingest-log')} is in use by process ${first.proc.pid}: each service process needs a DATA_DIR (or INGEST_LOG_DIR) of its own`);
  expect(firstServes).toBe(true);
});
