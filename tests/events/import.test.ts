import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ENGINE_DIR } from '../helpers/engine-dir';
import { LIFECYCLE_IMPORT_LINES as LINES, peakRssDuring } from '../helpers/lifecycle-scale';
import { PROJECT_ROOT } from '../helpers/project-root';
import { rowsOf } from '../helpers/queries';
import { createWorkspace, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/** Every this many lines one is bad, in one of these ways. */
const BAD_EVERY = 1997;
const BAD_LINES = ['{"type":"track"', '{"type":"jump","event":"x"}', '{"type":"track","timestamp":"yesterday"}', '[1,2]', `{"type":"track","event":"${'x'.repeat(40_000)}"}`];

let svc: TestService;
let ws: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: `Import ${Date.now()}` });
});
afterAll(() => svc?.stop());

const START_MS = Date.parse('2025-03-01T00:00:00Z');

/** Writes LINES lines, some bad; answers the bad lines' numbers (from 1). */
async function writeFile(path: string): Promise<number[]> {
  const out = createWriteStream(path);
  const bad: number[] = [];
  for (let i = 1; i <= LINES; i++) {
    let line: string;
    if (i % BAD_EVERY === 0) {
      line = BAD_LINES[bad.length % BAD_LINES.length]!;
      bad.push(i);
    } else {
      // Written by hand: the 20-digit number must reach the service as sent.
      const timestamp = new Date(START_MS + i * 1000).toISOString();
      line = `{"type":"track","event":"imported","messageId":"imp-${i}","userId":"user-${i % 500}","properties":{"i":${i},"big":12345678901234567890},"timestamp":"${timestamp}"}`;
    }
    if (!out.write(`${line}\n`)) await new Promise((drained) => out.once('drain', drained));
  }
  await new Promise((done) => out.end(done));
  return bad;
}

/** `npm run import -- path` against the test service; answers its summary line. */
async function runCli(path: string, env: Record<string, string> = {}): Promise<any> {
  const proc = Bun.spawn([process.execPath, 'src/events/import-cli.ts', path], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, IMPORT_URL: svc.url, IMPORT_KEY: ws.privateApiKey, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`import exited with ${code}: ${err}`);
  return JSON.parse(out);
}

test(`${LINES.toLocaleString('en')} lines with bad ones: good lines stored once with their timestamps, bad ones reported; a second import adds nothing`, async () => {
  const path = join(ENGINE_DIR, `import-${ws.databaseName}.ndjson`);
  const bad = await writeFile(path);
  const good = LINES - bad.length;
  // A part limit far below the file makes the command send it in several requests.
  const partLimit = String(Math.max(1 << 20, Math.ceil((LINES * 150) / 3)));
  const { result: first, peakMiB, beforeMiB } = await peakRssDuring(() => runCli(path, { IMPORT_MAX_BODY_BYTES: partLimit }));
  console.log(
    `import: ${LINES} lines, ${first.stored} stored, ${first.errorCount} refused in ${first.seconds} s: ${first.linesPerSecond} lines/s; ` +
      `RSS of the service's process ${beforeMiB.toFixed(0)} MiB before, peak ${peakMiB.toFixed(0)} MiB during`,
  );
  expect(first).toMatchObject({ stored: good, duplicates: 0, suppressed: 0, errorCount: bad.length });
  expect(first.errors.map((e: any) => e.line)).toEqual(bad);
  expect(first.errors[0].detail).toContain('not valid JSON');
  expect(first.errors[1].detail).toContain('/type');
  expect(first.errors[2].detail).toContain('/timestamp');
  if (bad.length > 4) expect(first.errors[4].detail).toContain('32768');

  const second = await runCli(path);
  console.log(`second import of the same file: ${second.stored} stored, ${second.duplicates} duplicates in ${second.seconds} s (${second.linesPerSecond} lines/s)`);
  expect(second).toMatchObject({ stored: 0, duplicates: good, errorCount: bad.length });

  const [stored] = await rowsOf(
    svc,
    "SELECT count() AS n, uniqExact(messageId) AS ids, min(timestamp) AS first, max(timestamp) AS last FROM events WHERE event = 'imported'",
    ws.privateApiKey,
  );
  expect(stored).toEqual({ n: good, ids: good, first: '2025-03-01 00:00:01.000000', last: expect.any(String) });
  const sample = await (await svc.request('GET', '/events?messageId=imp-2', { key: ws.privateApiKey })).text();
  expect(sample).toContain('"properties":{"i":2,"big":12345678901234567890}');
  expect(sample).toContain('"timestamp":"2025-03-01T00:00:02.000Z"');
});

describe('POST /events/import', () => {
  const post = (body: string | Uint8Array, headers: Record<string, string>, key = ws.privateApiKey) =>
    fetch(`${svc.url}/events/import`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-ndjson', ...headers },
    });

  test('takes gzip, and reports each bad line with its number and reason', async () => {
    const text = ['{"type":"page","messageId":"gz-1"}', 'not json', '', '{"type":"identify","traits":[]}', '{"type":"group","messageId":"gz-2"}'].join('\n');
    const res = await post(gzipSync(text), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    const summary: any = await res.json();
    expect(summary).toMatchObject({ stored: 2, duplicates: 0, errorCount: 2 });
    expect(summary.errors).toEqual([
      { line: 2, detail: expect.stringContaining('not valid JSON') },
      { line: 4, detail: expect.stringContaining('/traits') },
    ]);
  });

  test('a body that is not NDJSON: 415; bad gzip is reported, not a 500; a public key: 403', async () => {
    expect((await post('{}', { 'content-type': 'text/csv' })).status).toBe(415);
    const broken = await post('not gzip at all', { 'content-encoding': 'gzip' });
    expect(broken.status).toBe(200);
    expect(((await broken.json()) as any).errors[0].detail).toContain('could not be read');
    expect((await post('{"type":"page"}', {}, ws.publicApiKey)).status).toBe(403);
  });

  test('a body larger than MAX_BODY_BYTES is streamed, not refused', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => JSON.stringify({ type: 'track', event: 'big-body', properties: { pad: 'p'.repeat(150), i } })).join('\n');
    expect(lines.length).toBeGreaterThan(svc.config.maxBodyBytes);
    const res = await post(lines, {});
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).stored).toBe(60_000);
  });
});

test('an ingest queue smaller than an import batch still takes the whole import', async () => {
  const small = await startTestService({ INGEST_QUEUE_MAX_EVENTS: '50' });
  try {
    const lines = Array.from({ length: 120 }, (_, i) => JSON.stringify({ type: 'track', event: 'small-queue', properties: { i } })).join('\n');
    const res = await fetch(`${small.url}/events/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${small.privateKey}`, 'content-type': 'application/x-ndjson' },
      body: lines,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { stored: number }).stored).toBe(120);
  } finally {
    await small.stop();
  }
});
