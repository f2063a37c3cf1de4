import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { silentLogger } from '../../src/log';
import type { Migration } from '../../src/storage/migrations/runner';
import { MigrationRunner } from '../../src/storage/migrations/runner';
import { workspaceMigrations } from '../../src/storage/migrations/workspace';
import { jsonLines, StorageQueryError, type Storage } from '../../src/storage/storage';
import { uniqueName } from '../helpers/engine-dir';
import { rejection } from '../helpers/rejection';

/** A backend under test and how to let it go. */
export interface Backend {
  storage: Storage;
  close(): Promise<void>;
}

/** The same behaviour, whichever backend runs the SQL. */
export function describeStorageContract(name: string, open: () => Promise<Backend>): void {
  describe(`${name} storage`, () => {
    let backend: Backend;
    let storage: Storage;
    const meta = uniqueName('contract_meta');
    const ws = uniqueName('contract_ws');

    beforeAll(async () => {
      backend = await open();
      storage = backend.storage;
      const runner = new MigrationRunner(storage, meta, '', silentLogger);
      await runner.bootstrap();
      await runner.apply(ws, workspaceMigrations);
    });
    afterAll(() => backend.close());

    const row = (uuid: string, userId: string) => ({
      uuid,
      type: 'track',
      event: 'e',
      userId,
      anonymousId: '',
      groupId: '',
      instanceId: '',
      properties: JSON.stringify({ n: 1 }),
      traits: '',
      context: '',
      timestamp: '2024-01-01 00:00:00.000001',
      parsedAt: '2024-01-01 00:00:00.000001',
    });

    test('inserts rows and reads them back with bound parameters on both lanes', async () => {
      const uuid = crypto.randomUUID();
      await storage.insert(ws, 'events', jsonLines([row(uuid, "o'brien \"quoted\" \\ back")]));
      for (const lane of ['read', 'write'] as const) {
        const rows = await storage.query(
          `SELECT uuid, userId, JSONExtract(properties, 'n', 'UInt64') AS n, timestamp FROM \`${ws}\`.events WHERE userId = {u:String}`,
          { u: "o'brien \"quoted\" \\ back" },
          lane,
        );
        expect(rows).toHaveLength(1);
        expect(rows[0]!.uuid).toBe(uuid);
        expect(Number(rows[0]!.n)).toBe(1);
        expect(rows[0]!.timestamp).toBe('2024-01-01 00:00:00.000001');
      }
    });

    test('an insert repeated with its deduplication token is stored once; another token stores again', async () => {
      const lines = jsonLines([row(crypto.randomUUID(), 'dedup'), row(crypto.randomUUID(), 'dedup')]);
      const token = crypto.randomUUID();
      await storage.insert(ws, 'events', lines, token);
      await storage.insert(ws, 'events', lines, token);
      const count = async () => Number((await storage.query(`SELECT count() AS c FROM \`${ws}\`.events WHERE userId = 'dedup'`))[0]!.c);
      expect(await count()).toBe(2);
      await storage.insert(ws, 'events', lines, crypto.randomUUID());
      expect(await count()).toBe(4);
    });

    test('inserts of text and of bytes, large then small and at once, each store exactly their rows', async () => {
      // The embedded engine writes each insert's body into a buffer it reuses: a smaller body after
      // a larger one, or two inserts given at once, must not carry another's rows.
      const lines = (userId: string, n: number) => jsonLines(Array.from({ length: n }, () => row(crypto.randomUUID(), userId)));
      const asBytes = (text: readonly string[]) => text.map((line) => new TextEncoder().encode(line));
      await storage.insert(ws, 'events', asBytes(lines('reuse-large', 3_000)));
      await storage.insert(ws, 'events', lines('reuse-small-ç', 2));
      await Promise.all([
        storage.insert(ws, 'events', [...asBytes(lines('reuse-both', 5)), ...lines('reuse-both', 5)]),
        storage.insert(ws, 'events', asBytes(lines('reuse-other', 7))),
        storage.insert(ws, 'events', lines('reuse-third', 1)),
      ]);
      const rows = await storage.query(`SELECT userId, count() AS c, uniqExact(uuid) AS u FROM \`${ws}\`.events WHERE startsWith(userId, 'reuse-') GROUP BY userId ORDER BY userId`);
      expect(rows.map((r) => [r.userId, Number(r.c), Number(r.u)])).toEqual([
        ['reuse-both', 10, 10],
        ['reuse-large', 3_000, 3_000],
        ['reuse-other', 7, 7],
        ['reuse-small-ç', 2, 2],
        ['reuse-third', 1, 1],
      ]);
    });

    test('an insert with one bad row stores none of its rows', async () => {
      const good = crypto.randomUUID();
      const err = await rejection(storage.insert(ws, 'events', jsonLines([row(good, 'atomic'), { ...row(crypto.randomUUID(), 'atomic'), timestamp: 'never' }])));
      expect(err).toBeInstanceOf(StorageQueryError);
      expect((err as StorageQueryError).isBadData).toBe(true);
      const rows = await storage.query(`SELECT count() AS c FROM \`${ws}\`.events WHERE userId = 'atomic'`);
      expect(Number(rows[0]!.c)).toBe(0);
    });

    test('a failing statement is a StorageQueryError carrying the ClickHouse code', async () => {
      const syntax = await rejection(storage.query('SELEC 1'));
      expect(syntax).toBeInstanceOf(StorageQueryError);
      expect((syntax as StorageQueryError).clickhouseCode).toBe(62);
      expect((syntax as StorageQueryError).isBadData).toBe(false);
      const missing = await rejection(storage.query(`SELECT * FROM \`${ws}\`.nope`));
      expect((missing as StorageQueryError).clickhouseCode).toBe(60);
    });

    /** Every chunk of a stream, joined. */
    async function streamed(chunks: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; chunks: number }> {
      const parts: Uint8Array[] = [];
      for await (const chunk of chunks) parts.push(chunk);
      return { bytes: Buffer.concat(parts), chunks: parts.length };
    }

    test('streams a result in chunks, with one CSV header however many chunks, in a given database with given settings', async () => {
      const sql = 'SELECT number AS n, {tag:String} AS tag FROM numbers(200000) WHERE number % 2 = 0';
      const csv = await streamed(storage.stream(sql, { tag: 'a"b' }, 'CSVWithNames'));
      const lines = csv.bytes.toString().split('\n').filter((l) => l);
      expect(lines.length).toBe(100_001);
      expect(lines[0]).toBe('"n","tag"');
      expect(lines[1]).toBe('0,"a""b"');
      expect(lines.filter((l) => l === '"n","tag"').length).toBe(1);
      const ndjson = await streamed(storage.stream('SELECT count() AS c FROM events', {}, 'JSONEachRow', { database: ws, settings: { readonly: '1' } }));
      expect(JSON.parse(ndjson.bytes.toString())).toEqual({ c: expect.anything() });
      const refused = await rejection(streamed(storage.stream('INSERT INTO events (uuid) VALUES (generateUUIDv4())', {}, 'JSONEachRow', { database: ws, settings: { readonly: '1' } })));
      expect(refused).toBeInstanceOf(StorageQueryError);
    });

    test('streams one whole Parquet file', async () => {
      const parquet = await streamed(storage.stream('SELECT number AS n FROM numbers(300000)', {}, 'Parquet'));
      expect(parquet.bytes.subarray(0, 4).toString()).toBe('PAR1');
      expect(parquet.bytes.subarray(-4).toString()).toBe('PAR1');
    });

    test('migrations are recorded once and applying them again changes nothing', async () => {
      const runner = new MigrationRunner(storage, meta, '', silentLogger);
      await runner.apply(ws, workspaceMigrations);
      const rows = await storage.query(
        `SELECT version, count() AS c FROM \`${meta}\`.schema_migrations WHERE database = {db:String} GROUP BY version`,
        { db: ws },
      );
      expect(rows.map((r) => [Number(r.version), Number(r.c)]).sort((a, b) => a[0]! - b[0]!)).toEqual(workspaceMigrations.map((m) => [m.version, 1]));
    });

    test('a migration changed after it was applied stops the start', async () => {
      const runner = new MigrationRunner(storage, meta, '', silentLogger);
      const edited: Migration[] = [{ ...workspaceMigrations[0]!, statements: (t) => [`SELECT 1 -- ${t.db}`] }];
      const err = await rejection(runner.apply(ws, edited));
      expect((err as Error).message).toContain('was changed after it was applied');
    });
  });
}
