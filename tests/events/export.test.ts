import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { SERVED_BY_DENO, testInProcess } from '../helpers/deno-service';
import { ENGINE_DIR } from '../helpers/engine-dir';
import { countStreamed, LIFECYCLE_EVENTS, peakRssDuring } from '../helpers/lifecycle-scale';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

const USERS = 1000;
/** Events per POST when the service runs under Deno and the table cannot be filled directly. */
const SEED_BATCH = 10_000;
let svc: TestService;
let ws: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: `Export ${Date.now()}` });
  if (!SERVED_BY_DENO) {
    // Straight into the table: the test is about reading them out.
    await svc.storage.command(
      `INSERT INTO ${ws.databaseName}.events (uuid, type, event, userId, properties, context, timestamp, parsedAt)
       SELECT generateUUIDv4(), 'track', 'e', concat('user-', toString(number % ${USERS})), concat('{"n":', toString(number), ',"s":"a,b\\\\"c"}'), '',
              toDateTime64('2026-01-01 00:00:00', 6, 'UTC') + toIntervalSecond(number), now64(6)
       FROM numbers(${LIFECYCLE_EVENTS})`,
    );
    return;
  }
  // A service in a Deno process: the same events, sent.
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let first = 0; first < LIFECYCLE_EVENTS; first += SEED_BATCH) {
    const events = Array.from({ length: Math.min(SEED_BATCH, LIFECYCLE_EVENTS - first) }, (_, i) => ({
      type: 'track',
      event: 'e',
      userId: `user-${(first + i) % USERS}`,
      properties: { n: first + i, s: 'a,b"c' },
      timestamp: new Date(start + (first + i) * 1000).toISOString(),
    }));
    await sendEvents(svc, events, ws.publicApiKey);
  }
});
afterAll(() => svc?.stop());

const exportOf = (query: string, key = ws.privateApiKey) => svc.request('GET', `/events/export?${query}`, { key });

describe('GET /events/export: bad requests change nothing and answer precisely', () => {
  const bad: Array<[string, number, string]> = [
    ['', 400, 'format'],
    ['format=xml', 400, 'format'],
    ['format=csv&limit=10', 400, 'limit'],
    ['format=csv&startDate=yesterday', 400, 'startDate'],
    ['format=csv&color=red', 400, 'color'],
  ];
  for (const [query, status, named] of bad) {
    test(`?${query}: ${status} naming ${named}`, async () => {
      const res = await exportOf(query);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.text()).toContain(named);
    });
  }
  test('a public key: 403', async () => {
    expect((await exportOf('format=csv', ws.publicApiKey)).status).toBe(403);
  });
});

testInProcess(`${LIFECYCLE_EVENTS.toLocaleString('en')} events as ndjson, csv and parquet: every one, memory flat; parquet reads back`, async () => {
  const counts: Record<string, number> = {};
  for (const format of ['ndjson', 'csv', 'parquet'] as const) {
    const started = performance.now();
    const path = join(ENGINE_DIR, `export-${ws.databaseName}.${format}`);
    const { result, peakMiB, beforeMiB } = await peakRssDuring(async () => {
      const res = await exportOf(`format=${format}`);
      expect(res.status).toBe(200);
      if (format !== 'parquet') return countStreamed(res);
      const file = createWriteStream(path);
      const counted = await countStreamed(res, (chunk) => file.write(chunk));
      await new Promise((done) => file.end(done));
      return counted;
    });
    counts[format] = format === 'ndjson' ? result.lines : format === 'csv' ? result.lines - 1 : Number((await svc.storage.query(`SELECT count() AS n FROM file('${path}', Parquet)`))[0]!.n);
    console.log(
      `export ${format}: ${counts[format]} rows, ${(result.bytes / 1024 / 1024).toFixed(1)} MiB in ${Math.round(performance.now() - started)} ms; ` +
        `RSS of this process (service and test) ${beforeMiB.toFixed(0)} MiB before, peak ${peakMiB.toFixed(0)} MiB during`,
    );
  }
  expect(counts).toEqual({ ndjson: LIFECYCLE_EVENTS, csv: LIFECYCLE_EVENTS, parquet: LIFECYCLE_EVENTS });
});

test('a download cut short frees its place: the 2 exports a workspace may run at once, both cut, then a whole one', async () => {
  for (let i = 0; i < 2; i++) {
    const abort = new AbortController();
    const res = await fetch(`${svc.url}/events/export?format=csv`, { headers: { authorization: `Bearer ${ws.privateApiKey}` }, signal: abort.signal });
    expect(res.status).toBe(200);
    await res.body!.getReader().read();
    abort.abort();
  }
  // The engine notices the cut at its next chunk; until then the place may still be taken (429).
  let res: Response | undefined;
  for (let tries = 0; tries < 50 && res?.status !== 200; tries++) {
    if (tries > 0) await Bun.sleep(100);
    res = await exportOf('format=csv&userId=user-3');
  }
  expect(res!.status).toBe(200);
  expect((await countStreamed(res!)).lines).toBe(LIFECYCLE_EVENTS / USERS + 1);
});

test('ndjson lines are the events of GET /events; filters and time range apply', async () => {
  const query = 'userId=user-7&startDate=2026-01-01T00:00:00Z&endDate=2026-01-01T23:59:59Z';
  const res = await exportOf(`format=ndjson&${query}`);
  expect(res.headers.get('content-type')).toBe('application/x-ndjson');
  const lines = (await res.text()).split('\n').filter((l) => l);
  const listed = await listEvents(svc, `${query}&orderByField=timestamp&orderByDirection=ASC`, ws.privateApiKey);
  expect(lines.length).toBe(Math.min(listed.body.total, LIFECYCLE_EVENTS));
  expect(lines.slice(0, 3).map((l) => JSON.parse(l))).toEqual(listed.body.results.slice(0, 3));
});

test('csv has a header and quotes what needs quoting', async () => {
  const text = await (await exportOf('format=csv&userId=user-1&endDate=2026-01-01T00:00:01Z')).text();
  const [header, first] = text.split('\n');
  expect(header).toBe('"uuid","type","messageId","event","userId","anonymousId","groupId","instanceId","properties","traits","context","timestamp","parsedAt"');
  expect(first).toContain('"user-1"');
  expect(first).toContain('"{""n"":1,""s"":""a,b\\""c""}"');
});

describe('POST /queries/export', () => {
  const post = (body: unknown) => svc.request('POST', '/queries/export', { key: ws.privateApiKey, body });

  test('streams one statement in each format', async () => {
    const query = 'SELECT userId, count() AS events FROM events GROUP BY userId ORDER BY userId';
    const csv = await (await post({ query, format: 'csv' })).text();
    expect(csv.split('\n').filter((l) => l).length).toBe(USERS + 1);
    const ndjson = (await (await post({ query, format: 'ndjson' })).text()).split('\n').filter((l) => l).map((l) => JSON.parse(l));
    expect(ndjson[0]).toEqual({ userId: 'user-0', events: LIFECYCLE_EVENTS / USERS });
    const parquet = await post({ query, format: 'parquet' });
    expect(parquet.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(new TextDecoder().decode((await parquet.arrayBuffer()).slice(0, 4))).toBe('PAR1');
  });

  test('has no 100,000-row limit', async () => {
    const res = await post({ query: 'SELECT number FROM numbers(150000)', format: 'csv' });
    expect((await countStreamed(res)).lines).toBe(150_001);
  });

  const refused: Array<[string, unknown, number, string]> = [
    ['another database', { query: 'SELECT * FROM system.tables', format: 'csv' }, 403, 'outside this workspace'],
    ['a write', { query: 'DROP TABLE events', format: 'csv' }, 403, 'only SELECT'],
    ['a table function', { query: "SELECT * FROM file('/etc/passwd')", format: 'csv' }, 403, 'not allowed'],
    ['bad SQL', { query: 'SELEC 1', format: 'csv' }, 400, 'Syntax error'],
    ['a failure at run time', { query: "SELECT throwIf(number = 3, 'boom') FROM numbers(10)", format: 'csv' }, 400, 'boom'],
    ['no format', { query: 'SELECT 1' }, 400, 'format'],
  ];
  for (const [what, body, status, detail] of refused) {
    test(`${what}: ${status}`, async () => {
      const res = await post(body);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.text()).toContain(detail);
    });
  }
});
