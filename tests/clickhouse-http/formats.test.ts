import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import type { CreatedWorkspace, TestService } from '../helpers/test-service';
import { clickhouseFetch, startSeeded } from './fixture';

/** The answer's formats and headers, read as bytes, and the sandbox's byte limit on them. */
let svc: TestService;
let reader: CreatedWorkspace;
const MAX_RESULT_BYTES = 1024 * 1024;

beforeAll(async () => {
  ({ svc, reader } = await startSeeded({ QUERY_MAX_RESULT_BYTES: String(MAX_RESULT_BYTES) }));
});
afterAll(() => svc.stop());

const TRACKS = "SELECT event, count() AS n FROM events WHERE type = 'track' GROUP BY event ORDER BY event";

async function bytesOf(sql: string, search: Record<string, string> = {}, init: RequestInit = {}): Promise<{ res: Response; bytes: Buffer }> {
  const res = await clickhouseFetch(svc, reader.privateApiKey, { query: sql, ...search }, init);
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** The strings of a RowBinaryWithNamesAndTypes header: a LEB128 count, then names and types as LEB128-length strings. */
function rowBinaryHeader(bytes: Buffer): { names: string[]; types: string[] } {
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++]!;
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const text = () => {
    const length = varint();
    at += length;
    return bytes.subarray(at - length, at).toString('utf8');
  };
  const count = varint();
  const names = Array.from({ length: count }, text);
  return { names, types: Array.from({ length: count }, text) };
}

describe('output formats', () => {
  test('TabSeparated when nothing names a format; default_format, X-ClickHouse-Format and the FORMAT clause, in that order of precedence', async () => {
    expect((await bytesOf(TRACKS)).bytes.toString()).toBe('Signed Up\t1\nUpgraded\t1\n');
    expect((await bytesOf(TRACKS, { default_format: 'CSV' })).bytes.toString()).toBe('"Signed Up",1\n"Upgraded",1\n');
    expect((await bytesOf(TRACKS, {}, { headers: { 'x-clickhouse-format': 'JSONCompactEachRow' } })).bytes.toString()).toBe('["Signed Up", "1"]\n["Upgraded", "1"]\n');
    const clause = await bytesOf(`${TRACKS} FORMAT JSONEachRow`, { default_format: 'CSV' });
    expect(clause.bytes.toString()).toBe('{"event":"Signed Up","n":"1"}\n{"event":"Upgraded","n":"1"}\n');
    expect(clause.res.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
  });

  test('RowBinaryWithNamesAndTypes: one header of names and types, then the rows', async () => {
    const { res, bytes } = await bytesOf(`${TRACKS} FORMAT RowBinaryWithNamesAndTypes`);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(rowBinaryHeader(bytes)).toEqual({ names: ['event', 'n'], types: ['String', 'UInt64'] });
    expect(bytes.includes(Buffer.from('\x09Signed Up'))).toBe(true);
    expect(bytes.includes(Buffer.from('\x08Upgraded'))).toBe(true);
  });

  test('Parquet and Arrow, as the engine writes them, whole', async () => {
    const parquet = (await bytesOf(`${TRACKS} FORMAT Parquet`)).bytes;
    expect([parquet.subarray(0, 4).toString(), parquet.subarray(-4).toString()]).toEqual(['PAR1', 'PAR1']);
    const arrow = (await bytesOf(`${TRACKS} FORMAT Arrow`)).bytes;
    expect([arrow.subarray(0, 6).toString(), arrow.subarray(-6).toString()]).toEqual(['ARROW1', 'ARROW1']);
  });

  test('JSON over many blocks is one document', async () => {
    const answer = JSON.parse((await bytesOf('SELECT number AS n FROM numbers(20000) FORMAT JSON')).bytes.toString());
    expect({ rows: answer.rows, first: answer.data[0], last: answer.data.at(-1) }).toEqual({ rows: 20000, first: { n: '0' }, last: { n: '19999' } });
  });
});

describe('headers and compression', () => {
  test('X-ClickHouse-Query-Id (the client’s, or one made up), X-ClickHouse-Summary', async () => {
    const named = (await bytesOf('SELECT 1', { query_id: 'my-query-1' })).res;
    expect(named.headers.get('x-clickhouse-query-id')).toBe('my-query-1');
    const made = (await bytesOf('SELECT 1')).res;
    expect(made.headers.get('x-clickhouse-query-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(made.headers.get('x-clickhouse-summary')!)).toMatchObject({ result_bytes: '2', elapsed_ns: expect.stringMatching(/^\d+$/) });
  });

  test('answers compressed only when asked with enable_http_compression=1', async () => {
    const decoders: Record<string, (data: Buffer) => Buffer> = { gzip: gunzipSync, br: brotliDecompressSync, zstd: zstdDecompressSync };
    for (const [encoding, decode] of Object.entries(decoders)) {
      const { res, bytes } = await bytesOf(TRACKS, { enable_http_compression: '1' }, { headers: { 'accept-encoding': encoding }, decompress: false } as RequestInit);
      expect(res.headers.get('content-encoding')).toBe(encoding);
      expect(decode(bytes).toString()).toBe('Signed Up\t1\nUpgraded\t1\n');
    }
    const plain = await bytesOf(TRACKS, {}, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
    expect(plain.res.headers.get('content-encoding')).toBeNull();
  });

  test('a compressed statement (Content-Encoding of the body) is read', async () => {
    const res = await clickhouseFetch(svc, reader.privateApiKey, {}, { method: 'POST', body: Bun.gzipSync(Buffer.from('SELECT 40 + 2')), headers: { 'content-encoding': 'gzip' } });
    expect(await res.text()).toBe('42\n');
  });
});

describe('the byte limit of the sandbox holds in every format', () => {
  for (const format of ['JSON', 'Parquet', 'RowBinaryWithNamesAndTypes', 'JSONEachRow']) {
    test(format, async () => {
      const { res, bytes } = await bytesOf(`SELECT randomPrintableASCII(10000) AS r FROM numbers(1000) FORMAT ${format}`);
      expect({ status: res.status, code: res.headers.get('x-clickhouse-exception-code') }).toEqual({ status: 400, code: '396' });
      expect(bytes.toString()).toContain('(TOO_MANY_ROWS_OR_BYTES)');
    });
  }

  test('counted on the answer as written: text larger than the rows in memory is stopped by the service', async () => {
    // 800 KB of numbers in memory, which the engine's own count lets through, are 1.9 MB as JSON.
    const { res, bytes } = await bytesOf('SELECT number AS n FROM numbers(100000) FORMAT JSON');
    expect({ status: res.status, code: res.headers.get('x-clickhouse-exception-code') }).toEqual({ status: 400, code: '396' });
    expect(bytes.toString()).toContain(`larger than ${MAX_RESULT_BYTES} bytes`);
  });
});
