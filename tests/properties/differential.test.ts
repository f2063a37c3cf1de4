import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readColumnName } from '../../src/properties/json-read';
import { readCalls } from '../../src/properties/read-calls';
import { runQueries } from '../helpers/queries';
import { describeInProcess } from '../helpers/deno-service';
import { fastReadsOf, readColumnsOf, waitForStoredReads } from '../helpers/stored-reads';
import { startTestService, type TestService } from '../helpers/test-service';
import { eventsBody, expressions } from './differential-cases';

/**
 * 200 generated JSONExtract* expressions against the storage as it was (the JSON text alone:
 * PROPERTY_COLUMNS_MAX=0) and as it is (each read stored in a column, some rows materialized by
 * the mutation, some computed at insert): the answers, result column names included, must be the
 * same text.
 */
const EXPRESSIONS = expressions(200, 31);
const BATCH = 10;

let old: TestService;
let now: TestService;

const send = async (svc: TestService, body: string) => {
  const res = await svc.request('POST', '/events', { key: svc.publicKey, body });
  if (res.status !== 201) throw new Error(`POST /events answered ${res.status}: ${await res.text()}`);
};
const statementOf = (expression: string) => `SELECT messageId, ${expression} FROM events ORDER BY messageId`;
/** Each statement's answer text, run in batches of BATCH. */
async function answers(svc: TestService, statements: readonly string[]): Promise<string[]> {
  const texts: string[] = [];
  for (let i = 0; i < statements.length; i += BATCH) {
    const batch = statements.slice(i, i + BATCH);
    const { status, body } = await runQueries(svc, batch);
    if (status !== 200) throw new Error(JSON.stringify(body));
    texts.push(...body.results.map((r: unknown) => JSON.stringify(r)));
  }
  return texts;
}

/** Waits until the columns being added in the background are all there, and filled. */
async function settled(svc: TestService): Promise<void> {
  const database = svc.config.defaultWorkspaceDatabase;
  let last = -1;
  for (let still = 0; still < 3; await Bun.sleep(1000)) {
    const count = (await readColumnsOf(svc, database)).length;
    still = count === last ? still + 1 : 0;
    last = count;
  }
  await waitForStoredReads(svc, database, [], 60_000);
}

// They read the service's storage (its stored columns and mutations): in its own process only.
describeInProcess('JSONExtract expressions, before and after their reads are stored', () => {
  beforeAll(async () => {
    old = await startTestService({ PROPERTY_COLUMNS_MAX: '0' });
    now = await startTestService({ PROPERTY_COLUMNS_MAX: '1000' });
    const first = eventsBody(60, 0, 7);
    await Promise.all([send(old, first), send(now, first)]);
    // Twice, so that each read is stored, then the rows of the first batch are materialized.
    const statements = EXPRESSIONS.map(statementOf);
    await answers(now, statements);
    await answers(now, statements);
    await settled(now);
    // Rows inserted once the columns exist compute them at insert.
    const second = eventsBody(60, 60, 8);
    await Promise.all([send(old, second), send(now, second)]);
  }, 240_000);
  afterAll(async () => {
    await old.stop();
    await now.stop();
  });

  test('the generated expressions cover every function, the three JSON columns and odd keys', () => {
    expect(EXPRESSIONS).toHaveLength(200);
    // Arrays of values are never stored: those functions are not reads to the rewrite.
    for (const expression of EXPRESSIONS) expect(readCalls(expression)).toHaveLength(/^JSONExtract(ArrayRaw|Keys)\(/.test(expression) ? 0 : 1);
    for (const fn of ['JSONExtract(', 'JSONExtractString(', 'JSONExtractRaw(', 'JSONHas(', 'JSONType(', 'JSONLength(', 'JSONExtractFloat(', 'JSONExtractBool(']) {
      expect(EXPRESSIONS.some((e) => e.startsWith(fn))).toBe(true);
    }
    for (const part of ["(traits, ", "(context, ", "'missing'", "'nested', 'b', 'c'", "'it\\'s'", "'new\\nline'", "''", ', -1', "'Nullable(Float64)'"]) {
      expect(EXPRESSIONS.some((e) => e.includes(part))).toBe(true);
    }
  });

  test('most reads have their column, and statements making them are rewritten to read it', async () => {
    const database = now.config.defaultWorkspaceDatabase;
    const columns = new Set(await readColumnsOf(now, database));
    const storedReads = EXPRESSIONS.filter((e) => readCalls(e).length === 1 && columns.has(readColumnName(readCalls(e)[0]!.signature)));
    expect(storedReads.length).toBeGreaterThan(150);
    const { fastReads, sandbox, close } = fastReadsOf(now);
    try {
      for (const expression of storedReads) {
        const statement = await fastReads.prepare(sandbox, database, statementOf(expression));
        expect(statement).toContain(readColumnName(readCalls(expression)[0]!.signature));
      }
    } finally {
      await close();
    }
  });

  test('every expression answers the same, before and after, to the byte', async () => {
    const statements = EXPRESSIONS.map(statementOf);
    const [before, after] = await Promise.all([answers(old, statements), answers(now, statements)]);
    for (const [i, expression] of EXPRESSIONS.entries()) expect({ expression, answer: after[i] }).toEqual({ expression, answer: before[i] });
  }, 120_000);
});
