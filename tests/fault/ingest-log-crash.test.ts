/**
 * The ingest log under SIGKILL, with INGEST_FSYNC on, at four moments: mid-append (single events,
 * many in flight), after appends but before any load (the loader told to wait minutes), mid-load
 * (large batches being inserted), and during the replay of a backlog at the next start. After the
 * last start every acknowledged event is stored exactly once, and no request in part.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drive, mergeOutcomes, report, scaled, scenarioDir, startService, statusSummary, storedByTag, verify, waitUntil, type DriveOptions, type Outcomes } from './harness';

interface Moment {
  name: string;
  settings: Record<string, string>;
  load: DriveOptions;
  /** How long the load runs before the kill is armed. */
  loadMs: number;
  killWhen(outcomes: Outcomes, dir: string): boolean;
}

/** Lines of the service's log (JSON) with this message. */
const logged = (dir: string, msg: string) =>
  readFileSync(join(dir, 'service.log'), 'utf8')
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`));

test('SIGKILL mid-append, after append before load, mid-load and during replay: every acknowledged event stored exactly once', async () => {
  const dir = scenarioDir('ingest-log-crash');
  // The loader waits for minutes unless told: only what a moment lets through is loaded.
  const holdBack = { INGEST_LOAD_MAX_AGE_MS: '600000', INGEST_FLUSH_ROWS: '1000000' };
  const moments: Moment[] = [
    { name: 'mid-append', settings: {}, load: { connections: 32, eventsPerRequest: 1 }, loadMs: scaled(3000, 1500), killWhen: (o) => o.inFlight > 8 },
    { name: 'after append, before load', settings: holdBack, load: { connections: 8, eventsPerRequest: 50 }, loadMs: scaled(3000, 1500), killWhen: () => true },
    {
      name: 'mid-load',
      settings: { INGEST_FLUSH_ROWS: '2000', INGEST_LOG_SEGMENT_BYTES: '1048576' },
      load: { connections: 8, eventsPerRequest: 500 },
      loadMs: scaled(3000, 1500),
      killWhen: (o) => o.inFlight > 0,
    },
  ];
  const rounds: Outcomes[] = [];
  let port: number | undefined;
  for (const moment of moments) {
    const svc = await startService(dir, { INGEST_FSYNC: 'true', LOG_LEVEL: 'info', ...moment.settings }, port);
    port = svc.port;
    const load = drive(svc.url, moment.load);
    await Bun.sleep(moment.loadMs);
    const reached = await waitUntil(() => moment.killWhen(load.outcomes, dir), 5000, 1);
    await svc.kill();
    rounds.push(await load.stop());
    report(`ingest log: SIGKILL ${moment.name}`, { killedAtTheMoment: String(reached), answers: statusSummary(rounds.at(-1)!) });
  }

  // A backlog in the log (nothing loaded), then a start killed while it replays that backlog.
  const backlogged = await startService(dir, { INGEST_FSYNC: 'true', LOG_LEVEL: 'info', ...holdBack }, port);
  const backlog = drive(backlogged.url, { connections: 8, eventsPerRequest: 500 });
  await Bun.sleep(scaled(4000, 2000));
  await backlogged.kill();
  rounds.push(await backlog.stop());
  const replays = logged(dir, 'ingest log replayed').length;
  const replaying = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: join(import.meta.dir, '..', '..'),
    env: {
      ...process.env,
      DATA_DIR: join(dir, 'data'),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PUBLIC_API_KEYS: 'pk_fault_suite_public',
      PRIVATE_API_KEYS: 'sk_fault_suite_private',
      INGEST_FSYNC: 'true',
      INGEST_FLUSH_ROWS: '2000',
    },
    stdout: Bun.file(join(dir, 'replay.log')),
    stderr: 'ignore',
  });
  // Killed once it has queued the backlog and begun loading it, before it listens.
  const midReplay = await waitUntil(() => {
    try {
      return readFileSync(join(dir, 'replay.log'), 'utf8').includes('"msg":"ingest log replayed"');
    } catch {
      return false;
    }
  }, 60_000, 5);
  replaying.kill('SIGKILL');
  await replaying.exited;
  const replayLine = readFileSync(join(dir, 'replay.log'), 'utf8').split('\n').find((l) => l.includes('"msg":"ingest log replayed"'));
  report('ingest log: SIGKILL during replay', { killedAtTheMoment: String(midReplay), replay: replayLine ?? 'none', listened: String(readFileSync(join(dir, 'replay.log'), 'utf8').includes('"msg":"listening"')) });

  const svc = await startService(dir, { INGEST_FSYNC: 'true', LOG_LEVEL: 'info' }, port);
  const all = mergeOutcomes(rounds);
  const verdict = verify(all, await storedByTag(svc.url));
  // What the last start found in the log: the records loaded before the kill were skipped by uuid.
  report('ingest log: after the last start', { ...verdict, earlierReplays: replays, lastReplay: logged(dir, 'ingest log replayed').at(-1) ?? 'none' });
  await svc.terminate();

  expect(midReplay).toBe(true);
  expect(verdict.acknowledged).toBeGreaterThan(0);
  expect(verdict.lost).toBe(0);
  expect(verdict.duplicated).toBe(0);
  expect(verdict.partial).toBe(0);
  expect(verdict.storedDespiteRefusal).toBe(0);
});
