import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type LogFields } from '../../../src/log';
import { eventually } from '../../helpers/eventually';
import { PROJECT_ROOT } from '../../helpers/project-root';
import { mountSmallDisk, unmount } from '../../helpers/small-disk';
import { LogWriteError, WriteAheadLog } from '../../../src/storage/wal/write-ahead-log';

const root = mkdtempSync(join(tmpdir(), 'wal-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `log-${n++}`);

/** A logger that keeps what was logged, to check what recovery reports. */
function recordingLogger() {
  const entries: Array<{ level: string; msg: string } & LogFields> = [];
  const log = createLogger('debug', (line) => void entries.push(JSON.parse(line)));
  return { log, entries };
}

const text = (payload: Uint8Array) => Buffer.from(payload).toString('utf8');
const open = (dir: string, options: { fsync?: boolean; segmentBytes?: number } = {}, log = recordingLogger().log) =>
  WriteAheadLog.open({ dir, fsync: options.fsync ?? false, segmentBytes: options.segmentBytes ?? 1024 * 1024, log });
const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.wal')).sort();

describe('WriteAheadLog', () => {
  test('appends made in the same turn are written as one group, in order, and recovered in order after a restart', async () => {
    const dir = freshDir();
    const { wal, recovered } = open(dir, { fsync: true });
    expect(recovered).toEqual([]);
    const positions = await Promise.all(['a', 'bb', 'ccc'].map((p) => wal.append(Buffer.from(p))));
    expect(positions.map((p) => p.offset)).toEqual([0, 9, 19]);
    expect(new Set(positions.map((p) => p.segment)).size).toBe(1);
    expect(text(wal.read(positions[1]!))).toBe('bb');
    await wal.close();
    const again = open(dir);
    expect(again.recovered.map((r) => text(r.payload))).toEqual(['a', 'bb', 'ccc']);
    await again.wal.close();
  });

  test('after markLoaded a restart recovers only what follows, and fully loaded segments are deleted', async () => {
    const dir = freshDir();
    const { wal } = open(dir, { segmentBytes: 64 });
    const positions = [];
    for (let i = 0; i < 6; i++) positions.push(await wal.append(Buffer.from(`record-${i}-${'x'.repeat(30)}`)));
    expect(new Set(positions.map((p) => p.segment)).size).toBeGreaterThan(2);
    wal.markLoaded(positions[3]!);
    expect(segments(dir).map((f) => Number(f.slice(0, 16)))).not.toContain(positions[0]!.segment);
    await wal.close();
    const again = open(dir);
    expect(again.recovered.map((r) => text(r.payload).slice(0, 8))).toEqual(['record-4', 'record-5']);
    await again.wal.close();
  });

  test('a last segment cut mid-record keeps the intact records before the cut, reports what it dropped, and is cut back', async () => {
    const dir = freshDir();
    const { wal } = open(dir);
    for (const p of ['first', 'second', 'third']) await wal.append(Buffer.from(p));
    await wal.close();
    const [file] = segments(dir);
    const path = join(dir, file!);
    // The third record's header (8 bytes) and 2 of its 5 payload bytes survive the "crash".
    truncateSync(path, 13 + 14 + 8 + 2);
    const { log, entries } = recordingLogger();
    const again = open(dir, {}, log);
    expect(again.recovered.map((r) => text(r.payload))).toEqual(['first', 'second']);
    const report = entries.find((e) => e.level === 'error')!;
    expect(report.msg).toContain('damaged record');
    expect(report).toMatchObject({ keptRecords: 2, droppedBytes: 10 });
    expect(String(report.damage)).toContain('cut short');
    expect(statSync(path).size).toBe(27);
    await again.wal.close();
  });

  test('a record whose bytes changed fails its checksum: it and what follows are dropped, what precedes is kept', async () => {
    const dir = freshDir();
    const { wal } = open(dir);
    for (const p of ['one', 'two', 'six']) await wal.append(Buffer.from(p));
    await wal.close();
    const path = join(dir, segments(dir)[0]!);
    const bytes = Bun.file(path);
    const data = new Uint8Array(await bytes.arrayBuffer());
    data[11 + 8 + 1] = data[11 + 8 + 1]! ^ 0xff; // a payload byte of the second record
    writeFileSync(path, data);
    const { log, entries } = recordingLogger();
    const again = open(dir, {}, log);
    expect(again.recovered.map((r) => text(r.payload))).toEqual(['one']);
    expect(String(entries.find((e) => e.level === 'error')!.damage)).toContain('checksum');
    await again.wal.close();
  });
});

/**
 * A process holding the log in `dir`, whose parent is a shell that became `sleep` and never
 * reaps it: once killed, it stays a zombie (its id still answers kill(pid, 0)) until `parent`
 * is killed, as a service does under a supervisor that has not yet waited for it.
 */
async function holderUnderANonReapingParent(dir: string) {
  const hold = `import { WriteAheadLog } from ${JSON.stringify(join(PROJECT_ROOT, 'src/storage/wal/write-ahead-log.ts'))};
    import { silentLogger } from ${JSON.stringify(join(PROJECT_ROOT, 'src/log.ts'))};
    WriteAheadLog.open({ dir: process.env.LOG_DIR, fsync: false, segmentBytes: 1 << 20, log: silentLogger });
    console.log('open');
    setInterval(() => {}, 1 << 30);`;
  const parent = Bun.spawn(['sh', '-c', '"$0" -e "$1" & echo $!; exec sleep 60', process.execPath, hold], { env: { ...process.env, LOG_DIR: dir }, stdout: 'pipe' });
  const reader = parent.stdout.getReader();
  let out = '';
  while (!/^\d+\n(.*\n)*open\n/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the holder did not open the log: ${out}`);
    out += new TextDecoder().decode(value);
  }
  return { pid: Number(out.split('\n')[0]), parent };
}

/**
 * Whether `pid` is a zombie: every thread exited, the process not yet reaped. Its main thread
 * alone shows Z while the others still exit, and they hold its files (the lock) until they do.
 */
const isZombie = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] === 'Z' && readdirSync(`/proc/${pid}/task`).length === 1;

describe('WriteAheadLog lock', () => {
  test('a second process on the same log is refused, naming the first, and takes the log the moment the first is killed, even while it is a zombie', async () => {
    const dir = freshDir();
    const holder = await holderUnderANonReapingParent(dir);
    try {
      expect(() => open(dir)).toThrow(`the ingest log in ${dir} is in use by process ${holder.pid}: each service process needs a DATA_DIR (or INGEST_LOG_DIR) of its own`);
      process.kill(holder.pid, 'SIGKILL');
      await eventually('the killed holder is a zombie', async () => isZombie(holder.pid));
      // Its id still looks alive to a check by process id, which is what refused restarts.
      expect(() => process.kill(holder.pid, 0)).not.toThrow();
      const { wal } = open(dir);
      expect(readFileSync(join(dir, 'lock'), 'utf8')).toBe(String(process.pid));
      await wal.close();
    } finally {
      // Its parent's zombie until the parent goes, so the id cannot name another process yet.
      process.kill(holder.pid, 'SIGKILL');
      holder.parent.kill('SIGKILL');
      await holder.parent.exited;
    }
  });

  test('a lock file naming a live process that does not hold the log (an id reused after a crash or a reboot) does not keep the log from opening', async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    const stranger = Bun.spawn(['sleep', '30']);
    try {
      writeFileSync(join(dir, 'lock'), String(stranger.pid));
      const { wal } = open(dir);
      await wal.close();
    } finally {
      stranger.kill();
      await stranger.exited;
    }
  });

  test('a second open in the same process is refused until the first closes; the lock file stays', async () => {
    const dir = freshDir();
    const { wal } = open(dir);
    expect(() => open(dir)).toThrow('in use by another service in this process');
    await wal.close();
    expect(existsSync(join(dir, 'lock'))).toBe(true);
    const again = open(dir);
    await again.wal.close();
  });
});

describe('WriteAheadLog on a full disk', () => {
  const disk = join(root, 'small-disk');
  const mounted = mountSmallDisk(disk, 256 * 1024);
  afterAll(() => {
    if (mounted) unmount(disk);
  });

  test.skipIf(!mounted)('a write that does not fit fails whole (nothing of it kept), and appends work again once space returns', async () => {
    const dir = join(disk, 'log');
    const { wal } = open(dir, { fsync: true, segmentBytes: 1024 * 1024 });
    const kept = await wal.append(Buffer.from('kept'));
    const filler = join(disk, 'filler');
    // Fill the disk but for a few KiB.
    writeFileSync(filler, Buffer.alloc(256 * 1024 - 16 * 1024));
    const big = Buffer.alloc(64 * 1024, 7);
    const failure = await wal.append(big).catch((err) => err);
    expect(failure).toBeInstanceOf(LogWriteError);
    expect((failure as LogWriteError).code).toBe('ENOSPC');
    expect(wal.bytes).toBe(kept.length);
    rmSync(filler);
    const after = await wal.append(Buffer.from('after'));
    expect(after.offset).toBe(kept.length);
    await wal.close();
    const again = open(dir);
    expect(again.recovered.map((r) => text(r.payload))).toEqual(['kept', 'after']);
    await again.wal.close();
  });
});
