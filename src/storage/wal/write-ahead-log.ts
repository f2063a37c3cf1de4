import { closeSync, fdatasync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, truncateSync, unlinkSync, writeFileSync, writeSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../log';
import { tryLockFile, type FileLock } from './file-lock';
import { encodeRecord, scanRecords } from './record-format';

const datasync = promisify(fdatasync);

/** Where a record lies: its segment, its first byte there, and its bytes (header included). */
export interface LogPosition {
  segment: number;
  offset: number;
  length: number;
}

export interface RecoveredRecord {
  position: LogPosition;
  payload: Uint8Array;
}

export interface WriteAheadLogOptions {
  dir: string;
  /** fdatasync each group of appends before they resolve (a power loss then loses none of them). */
  fsync: boolean;
  /** A segment holding this many bytes is closed and a new one begun; loaded segments are deleted whole. */
  segmentBytes: number;
  log: Logger;
}

/** The log could not take an append (a full disk, an I/O error): nothing of it was kept. */
export class LogWriteError extends Error {
  override readonly name = 'LogWriteError';
  constructor(message: string, readonly code: string | undefined) {
    super(message);
  }
}

interface Append {
  record: Buffer;
  resolve(position: LogPosition): void;
  reject(err: unknown): void;
}

const SEGMENT_NAME = /^(\d{16})\.wal$/;
const segmentName = (n: number) => `${String(n).padStart(16, '0')}.wal`;
const CHECKPOINT = 'checkpoint';
const LOCK = 'lock';

/**
 * An append-only log of checksummed records in numbered segment files. Appends made while one
 * group is being written (and, with `fsync`, synced) are written together as the next group, with
 * one write and one fdatasync, and resolve once their group is on disk: many requests per sync.
 * The reader of the log (the loader) says how far it has loaded with `markLoaded`; segments below
 * that are deleted, and a restart recovers only the records after it. The last record of a crash
 * may be cut short: recovery checks every record's checksum and keeps the intact ones before it.
 */
export class WriteAheadLog {
  private pending: Append[] = [];
  private writing = false;
  private scheduled = false;
  private closed = false;
  private fd: number;
  private current: number;
  /** Bytes of every live segment, by number. */
  private readonly sizes = new Map<number, number>();
  private idle = Promise.withResolvers<void>();

  private constructor(
    private readonly options: WriteAheadLogOptions,
    private readonly lock: FileLock,
    segments: Map<number, number>,
    next: number,
  ) {
    for (const [n, size] of segments) this.sizes.set(n, size);
    this.current = next;
    this.fd = this.openSegment(next);
    this.idle.resolve();
  }

  /**
   * Opens the log in `options.dir` (made if missing) and recovers the records after the last
   * loaded one, in order. Appends go to a new segment, never after a recovered one's end.
   */
  static open(options: WriteAheadLogOptions): { wal: WriteAheadLog; recovered: RecoveredRecord[] } {
    mkdirSync(options.dir, { recursive: true });
    const lock = claimLock(options.dir);
    try {
      return WriteAheadLog.recover(options, lock);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  private static recover(options: WriteAheadLogOptions, lock: FileLock): { wal: WriteAheadLog; recovered: RecoveredRecord[] } {
    const loaded = readCheckpoint(options.dir);
    const numbers = readdirSync(options.dir)
      .map((name) => SEGMENT_NAME.exec(name)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const recovered: RecoveredRecord[] = [];
    const live = new Map<number, number>();
    for (const [i, segment] of numbers.entries()) {
      const path = join(options.dir, segmentName(segment));
      if (loaded && segment < loaded.segment) {
        unlinkSync(path);
        continue;
      }
      const bytes = readFileSync(path);
      const scan = scanRecords(bytes);
      if (scan.damage) {
        const last = i === numbers.length - 1;
        options.log.error('the ingest log has a damaged record: the records before it are kept, the rest of the segment is dropped', {
          segment: path,
          damage: scan.damage,
          keptRecords: scan.records.length,
          droppedBytes: bytes.byteLength - scan.intactBytes,
        });
        // The last segment is cut to its intact records; an earlier one is only read that far.
        if (last) truncateSync(path, scan.intactBytes);
      }
      for (const r of scan.records) {
        if (loaded && segment === loaded.segment && r.offset < loaded.offset) continue;
        recovered.push({ position: { segment, offset: r.offset, length: r.length }, payload: r.payload });
      }
      live.set(segment, scan.damage ? scan.intactBytes : bytes.byteLength);
    }
    const wal = new WriteAheadLog(options, lock, live, (numbers.at(-1) ?? 0) + 1);
    return { wal, recovered };
  }

  /** Bytes in the log's segments: loaded and not. */
  get bytes(): number {
    let total = 0;
    for (const size of this.sizes.values()) total += size;
    return total;
  }

  /** Appends a record (text is stored as UTF-8); resolves once it is written (and synced, with `fsync`) with its group. */
  append(payload: Uint8Array | string): Promise<LogPosition> {
    if (this.closed) return Promise.reject(new LogWriteError('the ingest log is closed', undefined));
    const { promise, resolve, reject } = Promise.withResolvers<LogPosition>();
    this.pending.push({ record: encodeRecord(payload), resolve, reject });
    if (!this.writing && !this.scheduled) {
      // The requests that arrive in the same turn of the event loop join one group.
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.writeGroup();
      });
    }
    return promise;
  }

  /** The payload of a record (appended by this process or recovered), read back from its segment. */
  read(position: LogPosition): Uint8Array {
    const fd = openSync(join(this.options.dir, segmentName(position.segment)), 'r');
    try {
      const bytes = Buffer.allocUnsafe(position.length);
      const read = readSync(fd, bytes, 0, position.length, position.offset);
      const scan = scanRecords(bytes.subarray(0, read));
      if (scan.records.length !== 1) throw new Error(`the ingest log's record at ${segmentName(position.segment)}:${position.offset} cannot be read back (${scan.damage ?? 'length mismatch'})`);
      return scan.records[0]!.payload;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Every record up to and including `position` is loaded: it is recorded (so a restart recovers
   * only what follows) and segments that hold nothing else are deleted.
   */
  markLoaded(position: LogPosition): void {
    const end = position.offset + position.length;
    writeFileSync(join(this.options.dir, CHECKPOINT), `${position.segment} ${end}\n`);
    for (const [segment, size] of this.sizes) {
      const done = segment < position.segment || (segment === position.segment && end >= size);
      if (!done || segment === this.current) continue;
      rmSync(join(this.options.dir, segmentName(segment)), { force: true });
      this.sizes.delete(segment);
    }
  }

  /** Writes what is pending, then closes the log; later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.writeGroup();
    await this.idle.promise;
    closeSync(this.fd);
    this.lock.release();
  }

  private async writeGroup(): Promise<void> {
    if (this.writing || this.pending.length === 0) return;
    this.writing = true;
    this.idle = Promise.withResolvers<void>();
    const group = this.pending;
    this.pending = [];
    try {
      if (this.sizes.get(this.current)! >= this.options.segmentBytes) {
        try {
          this.rotate();
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          throw new LogWriteError(`the ingest log could not begin a new segment (${code ?? (err as Error).message})`, code);
        }
      }
      const positions = this.write(group);
      if (this.options.fsync) await this.sync(positions[0]!.offset);
      group.forEach((a, i) => a.resolve(positions[i]!));
    } catch (err) {
      for (const a of group) a.reject(err);
    } finally {
      this.writing = false;
      this.idle.resolve();
      if (this.pending.length > 0) void this.writeGroup();
    }
  }

  /** One write of the group's records at the end of the current segment; on failure, none of them stays. */
  private write(group: Append[]): LogPosition[] {
    const start = this.sizes.get(this.current)!;
    const total = group.reduce((n, a) => n + a.record.byteLength, 0);
    try {
      // The group's records as they are (a copy of many large ones into one buffer doubled the memory).
      let written = writevSync(this.fd, group.map((a) => a.record), start);
      if (written < total) {
        const rest = Buffer.concat(group.map((a) => a.record)).subarray(written);
        for (let at = 0; at < rest.byteLength; ) {
          const n = writeSync(this.fd, rest, at, rest.byteLength - at, start + written);
          at += n;
          written += n;
        }
      }
    } catch (err) {
      this.cutBack(start);
      const code = (err as NodeJS.ErrnoException).code;
      throw new LogWriteError(`the ingest log could not be written (${code ?? (err as Error).message})`, code);
    }
    this.sizes.set(this.current, start + total);
    let offset = start;
    return group.map((a) => {
      const position = { segment: this.current, offset, length: a.record.byteLength };
      offset += a.record.byteLength;
      return position;
    });
  }

  private async sync(groupStart: number): Promise<void> {
    try {
      await datasync(this.fd);
    } catch (err) {
      // What reached the disk is unknown: the group is taken back, and its appends fail.
      this.cutBack(groupStart);
      const code = (err as NodeJS.ErrnoException).code;
      throw new LogWriteError(`the ingest log could not be synced to disk (${code ?? (err as Error).message})`, code);
    }
  }

  private cutBack(size: number): void {
    try {
      ftruncateSync(this.fd, size);
    } catch (err) {
      this.options.log.error('the ingest log could not be cut back after a failed write', { size, err });
    }
    this.sizes.set(this.current, size);
  }

  private rotate(): void {
    // The next segment first: if it cannot be opened, appends go on in this one.
    const next = this.openSegment(this.current + 1);
    closeSync(this.fd);
    this.fd = next;
    this.current++;
  }

  private openSegment(n: number): number {
    const fd = openSync(join(this.options.dir, segmentName(n)), 'w');
    if (this.options.fsync) syncDirectory(this.options.dir);
    this.sizes.set(n, 0);
    return fd;
  }
}

/** A new file survives a power loss only once its directory entry is synced too. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readCheckpoint(dir: string): { segment: number; offset: number } | undefined {
  try {
    const m = /^(\d+) (\d+)\n$/.exec(readFileSync(join(dir, CHECKPOINT), 'utf8'));
    // A checkpoint cut by a crash reads as none: everything is then recovered, and the loader
    // skips what the engine already holds.
    return m ? { segment: Number(m[1]), offset: Number(m[2]) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One process per log: two appending to the same segments would interleave their records. The
 * lock is the kernel's (see file-lock.ts), so it goes with its holder however that ends; the
 * holder's process id in the file only names it to whoever is refused. The file is never
 * deleted: a process that had opened it just before would lock a file no longer there, beside
 * another process locking its replacement.
 */
function claimLock(dir: string): FileLock {
  const path = join(dir, LOCK);
  const lock = tryLockFile(path);
  if (!lock) {
    const holder = Number(readFileSync(path, 'utf8'));
    if (holder === process.pid) throw new Error(`the ingest log in ${dir} is in use by another service in this process: each needs a log directory of its own`);
    // Between its lock and its write the holder is not named yet: the file is empty or names the one before.
    const who = Number.isInteger(holder) && holder > 0 ? `process ${holder}` : 'another process';
    throw new Error(`the ingest log in ${dir} is in use by ${who}: each service process needs a DATA_DIR (or INGEST_LOG_DIR) of its own`);
  }
  try {
    writeFileSync(path, String(process.pid));
  } catch (err) {
    lock.release();
    throw err;
  }
  return lock;
}
