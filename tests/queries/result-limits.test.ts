import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueName } from '../helpers/engine-dir';
import { runQueries } from '../helpers/queries';
import { peakRss, startServiceProcess, type ServiceProcess } from '../helpers/service-process';
import { createWorkspace, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/** The memory bound the documentation states for the whole process (docs/limits.md). */
const PROCESS_BOUND_BYTES = 2.5 * 1024 ** 3;

/** 300 MB of result text: 300 rows of 1 MB, all in one block of the engine. */
const WIDE_ROWS = "SELECT repeat('a', 1000000) AS r FROM numbers(300)";
/** 300 MB of result text in 30,000 rows of 10 KB, under the row limit. */
const MANY_ROWS = "SELECT repeat('b', 10000) AS r FROM numbers(30000)";

describe('result limits: one statement refused for its size leaves nothing behind', () => {
  let svc: TestService;
  let other: CreatedWorkspace;

  beforeAll(async () => {
    // One sandbox, so that every statement runs on the session the refused one ran on.
    svc = await startTestService({ QUERY_CONCURRENCY: '1', QUERY_MAX_RESULT_ROWS: '100000' });
    other = await createWorkspace(svc, { name: uniqueName('Leftovers') });
  });
  afterAll(() => svc.stop());

  for (const [what, key] of [
    ['the same workspace', () => svc.privateKey],
    ['another workspace', () => other.privateApiKey],
  ] as const) {
    test(`after a statement refused for its rows, the next one of ${what} answers exactly its own rows`, async () => {
      const refused = await runQueries(svc, ['SELECT number FROM numbers(200000)']);
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toContain('TOO_MANY_ROWS_OR_BYTES');
      const next = await runQueries(svc, ["SELECT 'mine' AS x FROM numbers(3)"], key());
      expect(next.status).toBe(200);
      expect(next.body.results[0].results).toEqual([{ x: 'mine' }, { x: 'mine' }, { x: 'mine' }]);
    });
  }

  test('after a statement stopped at the byte limit, the next one answers exactly its own rows', async () => {
    const refused = await runQueries(svc, [MANY_ROWS]);
    expect(refused.status).toBe(400);
    const next = await runQueries(svc, ['SELECT number AS n FROM numbers(2)'], other.privateApiKey);
    expect(next.body.results[0].results).toEqual([{ n: 0 }, { n: 1 }]);
  });
});

// The service runs as its own process, as `npm start` runs it, so that its peak memory is its
// own and not that of every test this runner has run before.
describe('result limits: bytes', () => {
  let service: ServiceProcess;
  let svc: Pick<TestService, 'request' | 'privateKey'>;
  let second: CreatedWorkspace;
  const dataDir = mkdtempSync(join(tmpdir(), 'analytics-result-limits-'));

  beforeAll(async () => {
    const privateKey = `sk_${uniqueName('limits')}`;
    service = await startServiceProcess({ DATA_DIR: dataDir, PUBLIC_API_KEYS: `pk_${uniqueName('limits')}`, PRIVATE_API_KEYS: privateKey, QUERY_CONCURRENCY: '2' });
    svc = {
      privateKey,
      request: (method, path, options = {}) =>
        fetch(service.url + path, { method, headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' }, body: JSON.stringify(options.body) }),
    };
    second = await createWorkspace(svc, { name: uniqueName('WideResults') });
  });
  afterAll(async () => {
    service.proc.kill();
    await service.proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('two workspaces asking for 300 MB results at once are both refused, naming the limit, and the process stays under its bound', async () => {
    for (const sql of [WIDE_ROWS, MANY_ROWS]) {
      const answers = await Promise.all([runQueries(svc, [sql]), runQueries(svc, [sql], second.privateApiKey)]);
      for (const answer of answers) {
        expect(answer.status).toBe(400);
        // Rows of 1 MB make one block of 300 MB in the engine, which its memory limit stops
        // before any of it is a result; 30,000 rows of 10 KB are stopped at the byte limit.
        expect(answer.body.detail).toMatch(sql === WIDE_ROWS ? /\(the limit is QUERY_MAX_MEMORY_BYTES\)$/ : /larger than 67108864 bytes \(QUERY_MAX_RESULT_BYTES\)/);
        expect(answer.text.length).toBeLessThan(10_000);
      }
    }
    const peak = peakRss(service.proc.pid);
    console.log(`two 300 MB results at once: peak RSS of the process ${(peak / 1024 ** 2).toFixed(0)} MiB (bound ${PROCESS_BOUND_BYTES / 1024 ** 2} MiB)`);
    expect(peak).toBeLessThan(PROCESS_BOUND_BYTES);
  });

  test('a result under the byte limit still comes back whole', async () => {
    const { status, body } = await runQueries(svc, ["SELECT repeat('c', 1000) AS r FROM numbers(1000)"]);
    expect(status).toBe(200);
    expect(body.results[0].results).toHaveLength(1000);
  });
});
