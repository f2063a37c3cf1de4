import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testInProcess } from '../helpers/deno-service';
import { eventually } from '../helpers/eventually';
import { PROJECT_ROOT } from '../helpers/project-root';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

let svc: TestService;
let ws: CreatedWorkspace;
const freshDir = mkdtempSync(join(tmpdir(), 'analytics-restore-'));
let restored: ServiceProcess | undefined;
beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: `Backup ${Date.now()}` });
});
afterAll(async () => {
  restored?.proc.kill();
  await restored?.proc.exited;
  await svc?.stop();
  rmSync(freshDir, { recursive: true, force: true });
});

/** Events per POST of the ingestion that runs around the backup. */
const BATCH = 100;

/** Runs the backup command line (`npm run backup` / `npm run restore`) with `env`; answers its printed JSON. */
async function cli(args: string[], env: Record<string, string>): Promise<any> {
  const proc = Bun.spawn([process.execPath, 'src/backups/cli.ts', ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${args[0]} exited with ${code}: ${err}`);
  return JSON.parse(out);
}

testInProcess('a backup under ingestion, restored into a fresh data directory, holds every event acknowledged before it started', async () => {
  // A person whose anonymous visit was linked when it signed in: the link must come back too.
  await sendEvents(svc, [
    { type: 'page', anonymousId: 'backup-anon' },
    { type: 'identify', userId: 'backup-user', anonymousId: 'backup-anon' },
  ]);
  // Ingestion runs before, during and after the backup; each batch is numbered by its messageIds.
  let sent = 0;
  let stop = false;
  const ingesting = (async () => {
    for (let batch = 0; !stop; batch++) {
      await sendEvents(svc, Array.from({ length: BATCH }, (_, i) => ({ type: 'track', event: 'b', messageId: `m-${batch * BATCH + i}` })), ws.publicApiKey);
      sent = (batch + 1) * BATCH;
    }
  })();
  await eventually('some events are acknowledged', async () => sent >= 10 * BATCH);
  const ackedBeforeBackup = sent;
  const started = performance.now();
  const backup = await cli(['backup'], { BACKUP_URL: svc.url, BACKUP_KEY: svc.privateKey });
  const ackedAfterBackup = sent;
  stop = true;
  await ingesting;
  console.log(
    `backup: ${backup.files} files, ${(backup.bytes / 1024 / 1024).toFixed(1)} MiB of ${backup.databases.length} databases in ${Math.round(performance.now() - started)} ms ` +
      `while ${ackedAfterBackup - ackedBeforeBackup} events were acknowledged; ${ackedBeforeBackup} acknowledged before it began`,
  );
  expect(backup).toMatchObject({ status: 'finished', databases: [svc.settings.META_DATABASE, svc.settings.DEFAULT_WORKSPACE_DATABASE, ws.databaseName] });

  const restore = await cli(['restore', backup.path], { DATA_DIR: freshDir });
  expect(restore.dataDir).toBe(freshDir);
  // The restored directory, served by a process of its own (one engine directory per process).
  restored = await startServiceProcess({ ...svc.settings, DATA_DIR: freshDir, PORT: '0' });
  const res = await fetch(`${restored.url}/queries`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ws.privateApiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ queries: [`SELECT countIf(toUInt64(substring(messageId, 3)) < ${ackedBeforeBackup}) AS before, count() AS n FROM events`] }),
  });
  expect(res.status).toBe(200);
  const [counts] = ((await res.json()) as any).results[0].results;
  console.log(`restored: ${counts.n} events, of which ${counts.before} acknowledged before the backup (all ${ackedBeforeBackup})`);
  expect(counts.before).toBe(ackedBeforeBackup);
  expect(counts.n).toBeLessThanOrEqual(sent);
  const person = await fetch(`${restored.url}/persons/backup-user`, { headers: { authorization: `Bearer ${svc.privateKey}` } });
  expect(person.status).toBe(200);
  expect(await person.json()).toMatchObject({ personId: 'backup-user', anonymousIds: ['backup-anon'], eventCount: 2 });
});

test('POST /backups needs an admin key; an unknown backup is 404', async () => {
  expect((await svc.request('POST', '/backups', { key: ws.privateApiKey })).status).toBe(403);
  expect((await svc.request('POST', '/backups')).status).toBe(401);
  expect((await svc.request('GET', '/backups/nope', { key: svc.privateKey })).status).toBe(404);
});

test('restore refuses a path that is not a backup, and a data directory that is not empty', async () => {
  const run = async (args: string[], env: Record<string, string>) => {
    const proc = Bun.spawn([process.execPath, 'src/backups/cli.ts', ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
    return { code: await proc.exited, err: await new Response(proc.stderr).text() };
  };
  expect(await run(['restore', tmpdir()], { DATA_DIR: join(freshDir, 'never') })).toMatchObject({ code: 1, err: expect.stringContaining('is not a backup') });
  const fake = mkdtempSync(join(tmpdir(), 'analytics-fake-backup-'));
  writeFileSync(join(fake, '.backup'), '');
  try {
    // The test's own engine directory is in use and not empty.
    expect(await run(['restore', fake], { DATA_DIR: svc.config.dataDir })).toMatchObject({ code: 1, err: expect.stringContaining('is not empty') });
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});
