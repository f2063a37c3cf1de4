import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parseIsoDateTime } from '../../src/timestamps';
import { MonotonicClock } from '../../src/monotonic-clock';
import { acceptEvent, type AcceptedEvent } from '../../src/events/event-rows';
import { IngestBuffer, IngestClosedError, IngestOutcomeUnknownError, IngestOverloadedError, IngestRefusedError } from '../../src/events/ingest-buffer';
import { RecentMessageIds } from '../../src/events/recent-message-ids';
import { silentLogger } from '../../src/log';
import { EmbeddedStorage } from '../../src/storage/embedded';
import { MigrationRunner } from '../../src/storage/migrations/runner';
import { workspaceMigrations } from '../../src/storage/migrations/workspace';
import { StorageOutcomeUnknownError, StorageUnavailableError, type Storage } from '../../src/storage/storage';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';

/**
 * The real engine, losing the answers of its next `loseAnswers` inserts (it runs them, then
 * fails as a timed-out server would) and refusing every insert while `down` (running none).
 */
class UnreliableStorage extends EmbeddedStorage {
  loseAnswers = 0;
  down = false;
  override async insert(database: string, table: string, lines: readonly string[], deduplicationToken?: string): Promise<void> {
    if (this.down) throw new StorageOutcomeUnknownError('no answer (down)');
    await super.insert(database, table, lines, deduplicationToken);
    if (this.loseAnswers > 0) {
      this.loseAnswers--;
      throw new StorageOutcomeUnknownError('no answer (lost)');
    }
  }
}

/** The real engine, whose next insert waits for `release()` and then fails, running nothing. */
class FailingOnceStorage extends EmbeddedStorage {
  private readonly gate = Promise.withResolvers<void>();
  private failed = false;
  release(): void {
    this.gate.resolve();
  }
  override async insert(database: string, table: string, lines: readonly string[], deduplicationToken?: string): Promise<void> {
    if (!this.failed) {
      this.failed = true;
      await this.gate.promise;
      throw new StorageUnavailableError('refused (failing once)');
    }
    await super.insert(database, table, lines, deduplicationToken);
  }
}

/** The real engine, with a record of the inserts it was asked to run. */
class RecordingStorage extends EmbeddedStorage {
  readonly inserts: number[] = [];
  override insert(database: string, table: string, lines: readonly string[], deduplicationToken?: string): Promise<void> {
    this.inserts.push(lines.length);
    return super.insert(database, table, lines, deduplicationToken);
  }
}

let storage: RecordingStorage;
const ws = uniqueName('buffer_ws');
beforeAll(async () => {
  storage = new RecordingStorage(ENGINE_DIR, 1, 2);
  const runner = new MigrationRunner(storage, uniqueName('buffer_meta'), '', silentLogger);
  await runner.bootstrap();
  await runner.apply(ws, workspaceMigrations);
});
afterAll(() => storage.close());

let seq = 0;
const clock = new MonotonicClock();
function rows(n: number, tag: string): AcceptedEvent[] {
  return Array.from({ length: n }, () => acceptEvent({ type: 'track', event: tag, userId: String(seq++) }, clock.next(), ws));
}

async function count(storageToRead: Storage, tag: string): Promise<number> {
  const r = await storageToRead.query(`SELECT count() AS c FROM \`${ws}\`.events WHERE event = {tag:String}`, { tag });
  return Number(r[0]!.c);
}

const messageIds = (on: Storage) => new RecentMessageIds(on, { windowMs: 86_400_000, maxIds: 10_000 }, silentLogger);

const buffer = (options: Partial<ConstructorParameters<typeof IngestBuffer>[1]> = {}) =>
  new IngestBuffer(storage, { flushRows: 1000, insertIntervalMs: 2, maxQueuedRows: 100_000, writers: 2, messageIds: messageIds(storage), ...options }, silentLogger);

describe('IngestBuffer', () => {
  test('a lone submission is inserted at once and resolves after commit', async () => {
    const b = buffer({ insertIntervalMs: 60_000 });
    storage.inserts.length = 0;
    await b.submit(ws, rows(3, 'lone'));
    expect(storage.inserts).toEqual([3]);
    expect(await count(storage, 'lone')).toBe(3);
    await b.close();
  });

  test('concurrent submissions are gathered into fewer inserts, none split', async () => {
    const b = buffer();
    storage.inserts.length = 0;
    await Promise.all(Array.from({ length: 50 }, () => b.submit(ws, rows(10, 'group'))));
    expect(await count(storage, 'group')).toBe(500);
    expect(storage.inserts.length).toBeLessThan(50);
    for (const n of storage.inserts) expect(n % 10).toBe(0);
    await b.close();
  });

  test('a batch is handed over once flushRows wait, not one insert larger', async () => {
    const b = buffer({ flushRows: 20, insertIntervalMs: 50 });
    storage.inserts.length = 0;
    await Promise.all(Array.from({ length: 10 }, () => b.submit(ws, rows(10, 'sized'))));
    for (const n of storage.inserts) expect(n).toBeLessThanOrEqual(20);
    expect(await count(storage, 'sized')).toBe(100);
    await b.close();
  });

  test('when the queue is full a submission is refused at once and nothing of it is stored', async () => {
    const b = buffer({ maxQueuedRows: 10 });
    const first = b.submit(ws, rows(8, 'bounded'));
    await expect(b.submit(ws, rows(5, 'bounded-over'))).rejects.toBeInstanceOf(IngestOverloadedError);
    await first;
    expect(await count(storage, 'bounded')).toBe(8);
    expect(await count(storage, 'bounded-over')).toBe(0);
    await b.close();
  });

  test('once full, the queue refuses even what would fit until it has drained to half', async () => {
    const b = buffer({ maxQueuedRows: 10 });
    const first = b.submit(ws, rows(8, 'shed-first'));
    await expect(b.submit(ws, rows(5, 'shed-over'))).rejects.toBeInstanceOf(IngestOverloadedError);
    // 2 rows would fit, but the queue is shedding until the 8 rows have left it.
    expect(() => b.admit()).toThrow(IngestOverloadedError);
    await expect(b.submit(ws, rows(2, 'shed-fits'))).rejects.toBeInstanceOf(IngestOverloadedError);
    await first;
    expect(() => b.admit()).not.toThrow();
    await b.submit(ws, rows(2, 'shed-after'));
    expect(await count(storage, 'shed-fits')).toBe(0);
    expect(await count(storage, 'shed-after')).toBe(2);
    await b.close();
  });

  test('a submission larger than the whole queue is refused alone: the queue does not start shedding', async () => {
    const b = buffer({ maxQueuedRows: 10 });
    await expect(b.submit(ws, rows(11, 'oversized'))).rejects.toBeInstanceOf(IngestOverloadedError);
    expect(() => b.admit()).not.toThrow();
    await b.submit(ws, rows(3, 'after-oversized'));
    expect(await count(storage, 'after-oversized')).toBe(3);
    await b.close();
  });

  test('announces each committed insert with its events in acceptance order, never a failed one', async () => {
    const announced: Array<{ database: string; events: string[] }> = [];
    const b = new IngestBuffer(
      storage,
      { flushRows: 1000, insertIntervalMs: 2, maxQueuedRows: 100_000, writers: 2, messageIds: messageIds(storage), onCommitted: (database, events) => announced.push({ database, events: events.map((e) => e.uuid) }) },
      silentLogger,
    );
    const batches = Array.from({ length: 10 }, () => rows(5, 'announced'));
    await Promise.all(batches.map((batch) => b.submit(ws, batch)));
    // A batch is announced once it and every older one have settled, just after its answers.
    await eventually('every committed batch is announced', async () => announced.flatMap((a) => a.events).length === 50);
    expect(announced.every((a) => a.database === ws)).toBe(true);
    expect(announced.flatMap((a) => a.events)).toEqual(batches.flat().map((a) => a.event.uuid));
    // Not the data's fault: 503 (StorageUnavailableError), not the 400 of refused events.
    await expect(b.submit('no_such_database_here', rows(1, 'announced'))).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(announced.flatMap((a) => a.events)).toHaveLength(50);
    await b.close();
  });

  test('with two writers, inserts overlap, yet commits are announced in acceptance order, ahead of the frontier', async () => {
    const announced: string[] = [];
    let newestAnnounced = 0n;
    const frontierBehind: boolean[] = [];
    const b: IngestBuffer = new IngestBuffer(
      storage,
      {
        flushRows: 7,
        insertIntervalMs: 0,
        maxQueuedRows: 100_000,
        writers: 2,
        messageIds: messageIds(storage),
        onCommitted: (_database, events) => {
          announced.push(...events.map((e) => e.uuid));
          for (const e of events) newestAnnounced = parseIsoDateTime(e.parsedAt)! > newestAnnounced ? parseIsoDateTime(e.parsedAt)! : newestAnnounced;
          // Whatever is still being inserted is newer than everything announced so far.
          const frontier = b.frontier();
          frontierBehind.push(frontier !== undefined && frontier <= newestAnnounced);
        },
      },
      silentLogger,
    );
    const batches = Array.from({ length: 30 }, () => rows(3, 'overlap'));
    await Promise.all(batches.map((batch) => b.submit(ws, batch)));
    await eventually('every batch is announced', async () => announced.length === 90);
    expect(announced).toEqual(batches.flat().map((a) => a.event.uuid));
    expect(frontierBehind.filter(Boolean)).toEqual([]);
    expect(b.frontier()).toBeUndefined();
    await b.close();
  });

  test('close commits everything accepted, then refuses new submissions', async () => {
    const b = buffer({ flushRows: 5 });
    const accepted = Array.from({ length: 20 }, () => b.submit(ws, rows(3, 'closing')));
    await b.close();
    await Promise.all(accepted);
    expect(await count(storage, 'closing')).toBe(60);
    await expect(b.submit(ws, rows(1, 'closing'))).rejects.toBeInstanceOf(IngestClosedError);
  });

  test('an insert whose answer was lost is answered "unknown", repeated until known, stored once, then announced', async () => {
    const unreliable = new UnreliableStorage(ENGINE_DIR, 1, 1);
    unreliable.loseAnswers = 2;
    const announced: string[] = [];
    const b = new IngestBuffer(unreliable, { flushRows: 1000, insertIntervalMs: 0, maxQueuedRows: 100_000, writers: 2, messageIds: messageIds(unreliable), onCommitted: (_db, events) => announced.push(...events.map((e) => e.uuid)) }, silentLogger);
    const sent = rows(4, 'unconfirmed');
    await expect(b.submit(ws, sent)).rejects.toBeInstanceOf(IngestOutcomeUnknownError);
    // Until the outcome is known, readers of the table must not pass over these events.
    expect(b.frontier()).toBe(parseIsoDateTime(sent[0]!.event.parsedAt));
    await eventually('the repeated insert is answered and announced', async () => announced.length === 4);
    expect(announced).toEqual(sent.map((a) => a.event.uuid));
    expect(await count(storage, 'unconfirmed')).toBe(4);
    expect(b.frontier()).toBeUndefined();
    await b.submit(ws, rows(1, 'unconfirmed-after'));
    await b.close();
    await unreliable.close();
  });

  test('an insert of unknown outcome while storage stays away: close makes one last attempt and returns', async () => {
    const unreliable = new UnreliableStorage(ENGINE_DIR, 1, 1);
    unreliable.down = true;
    const b = new IngestBuffer(unreliable, { flushRows: 1000, insertIntervalMs: 0, maxQueuedRows: 100_000, writers: 2, messageIds: messageIds(unreliable) }, silentLogger);
    await expect(b.submit(ws, rows(2, 'abandoned'))).rejects.toBeInstanceOf(IngestOutcomeUnknownError);
    expect(b.depth).toBe(2);
    await b.close();
    expect(b.depth).toBe(0);
    expect(await count(storage, 'abandoned')).toBe(0);
    await unreliable.close();
  });

  test("rows the engine refuses fail only their own request, not the others' in the same insert", async () => {
    const b = buffer({ flushRows: 3, insertIntervalMs: 60_000 });
    await b.submit(ws, rows(1, 'isolated-warmup'));
    storage.inserts.length = 0;
    // Past validation by construction: a lone surrogate, which the engine refuses.
    const refused = [acceptEvent({ type: 'track', event: 'isolated-bad', userId: '\ud800' }, clock.next(), ws)];
    const outcomes = await Promise.allSettled([b.submit(ws, rows(1, 'isolated-good')), b.submit(ws, refused), b.submit(ws, rows(1, 'isolated-good'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(IngestRefusedError);
    expect(storage.inserts).toEqual([3, 1, 1, 1]);
    expect(await count(storage, 'isolated-good')).toBe(2);
    expect(await count(storage, 'isolated-bad')).toBe(0);
    await b.close();
  });

  test('a repeat of a messageId whose first insert is still running waits for it, and is stored when that one fails', async () => {
    const failing = new FailingOnceStorage(ENGINE_DIR, 1, 2);
    const b = new IngestBuffer(failing, { flushRows: 1, insertIntervalMs: 0, maxQueuedRows: 100_000, writers: 2, messageIds: messageIds(failing) }, silentLogger);
    const messageId = uniqueName('msg');
    const copy = () => [acceptEvent({ type: 'track', event: 'repeat-waits', messageId }, clock.next(), ws)];
    const first = b.submit(ws, copy());
    const repeat = b.submit(ws, copy());
    // The repeat is claimed while the first insert runs; it must not be taken for a stored copy.
    failing.release();
    const outcomes = await Promise.allSettled([first, repeat]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(await count(storage, 'repeat-waits')).toBe(1);
    await b.close();
    await failing.close();
  });
});
