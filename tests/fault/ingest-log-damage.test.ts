/**
 * The ingest log damaged or out of room, with the real service: a last segment cut mid-record
 * (the records before the cut load, the service starts and logs what it dropped), and a full disk
 * under the log (a small tmpfs): clear 503s, nothing acknowledged lost, collection back once
 * there is room.
 */
import { expect, test } from 'bun:test';
import { readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mountSmallDisk, unmount } from '../helpers/small-disk';
import { KEYS, report, scenarioDir, startService, storedByTag } from './harness';

const send = (url: string, tag: string, n = 3) =>
  fetch(`${url}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEYS.public}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: Array.from({ length: n }, (_, i) => ({ type: 'track', event: 'fault', properties: { r: tag, i } })) }),
  });

test('a last segment cut mid-record: the intact records before it load, the service starts and logs what it dropped', async () => {
  const dir = scenarioDir('log-cut');
  // Nothing is loaded of its own accord: every acknowledged request stays in the log until the kill.
  const svc = await startService(dir, { INGEST_FSYNC: 'true', INGEST_LOAD_MAX_AGE_MS: '600000', INGEST_FLUSH_ROWS: '1000000' });
  const tags = Array.from({ length: 10 }, (_, i) => `cut${i}`);
  for (const tag of tags) expect((await send(svc.url, tag)).status).toBe(201);
  await svc.kill();
  const logDir = join(dir, 'data', 'ingest-log');
  const segment = join(logDir, readdirSync(logDir).filter((f) => f.endsWith('.wal')).sort().at(-1)!);
  // The last request's record loses its final 5 bytes, as a write cut by a crash would.
  truncateSync(segment, statSync(segment).size - 5);

  const restarted = await startService(dir, { LOG_LEVEL: 'info' });
  const stored = await storedByTag(restarted.url);
  const damage = readFileSync(join(dir, 'service.log'), 'utf8')
    .split('\n')
    .find((line) => line.includes('damaged record'));
  report('ingest log cut mid-record', { storedRequests: stored.size, damage: damage ?? 'not logged' });
  await restarted.terminate();
  for (const tag of tags.slice(0, -1)) expect(stored.get(tag)).toEqual({ rows: 3, distinct: 3 });
  expect(stored.has(tags.at(-1)!)).toBe(false);
  expect(JSON.parse(damage!)).toMatchObject({ level: 'error', keptRecords: 9 });
  expect(JSON.parse(damage!).damage).toContain('cut short');
});

const mountable = (() => {
  const probe = join(scenarioDir('mount-probe'), 'disk');
  if (!mountSmallDisk(probe, 1024 * 1024)) return false;
  unmount(probe);
  return true;
})();

test.skipIf(!mountable)('a full disk under the log: 503 naming it, nothing acknowledged lost, collection resumes when space returns', async () => {
  const dir = scenarioDir('log-full');
  const disk = join(dir, 'log-disk');
  mountSmallDisk(disk, 4 * 1024 * 1024);
  try {
    const svc = await startService(dir, { INGEST_FSYNC: 'true', INGEST_LOG_DIR: join(disk, 'log'), INGEST_LOG_SEGMENT_BYTES: '65536' });
    const acked: string[] = [];
    for (let i = 0; i < 5; i++) {
      expect((await send(svc.url, `before${i}`)).status).toBe(201);
      acked.push(`before${i}`);
    }
    // The disk fills up (another file on the same volume) but for a few KiB.
    const filler = join(disk, 'filler');
    writeFileSync(filler, Buffer.alloc(4 * 1024 * 1024 - 64 * 1024 - statSync(join(disk, 'log')).size));
    let refused = 0;
    let detail = '';
    for (let i = 0; i < 20; i++) {
      const res = await send(svc.url, `full${i}`, 200);
      if (res.status === 201) acked.push(`full${i}`);
      else {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('1');
        detail = ((await res.json()) as { detail: string }).detail;
        refused++;
      }
    }
    rmSync(filler);
    const after = await send(svc.url, 'after');
    expect(after.status).toBe(201);
    acked.push('after');
    const stored = await storedByTag(svc.url);
    report('ingest log on a full disk', { refused, detail, acknowledged: acked.length, stored: acked.filter((t) => stored.has(t)).length });
    await svc.terminate();
    expect(refused).toBeGreaterThan(0);
    expect(detail).toContain('ENOSPC');
    for (const tag of acked) expect(stored.has(tag)).toBe(true);
  } finally {
    // Before the scenario's directory is removed.
    unmount(disk);
  }
});
