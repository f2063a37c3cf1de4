import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { breachTally, describeFinding, doorOf, runCampaign, summarize } from './hostile-sql/campaign';
import type { Terrain } from './hostile-sql/derivation';
import { callApi } from './hostile-sql/doors';
import { hostileStatement, type DoorName } from './hostile-sql/grammar';
import { TEST_RUNTIME } from '../helpers/service-process';
import { canariesIn, startTarget, type Target } from './hostile-sql/target';

/**
 * The SQL sandbox fuzzed: 10,000 statements of the hostile grammar (hostile-sql/grammar.ts)
 * through the five doors, with a fresh seed each run (printed; HOSTILE_SQL_SEED=<n> repeats a
 * run). No answer may hold a canary (hostile-sql/target.ts), none may be a 5xx, no statement may
 * write a file; and benign statements run through every door, so a guard that refused everything
 * would show. `npm run bench:hostile-sql` runs it longer. Under TEST_RUNTIME=deno, which CI runs
 * after the same suite under Bun, 2,000 statements: the guard is the same code under either runtime.
 */
const COUNT = TEST_RUNTIME === 'deno' ? 2_000 : 10_000;
const SEED = process.env.HOSTILE_SQL_SEED ? Number(process.env.HOSTILE_SQL_SEED) : Math.floor(Math.random() * 2 ** 31);
const DOORS: readonly DoorName[] = ['queries', 'export', 'clickhouse-get', 'clickhouse-post', 'dashboard'];
/** Findings printed at most, of each kind. */
const PRINTED = 20;

console.log(`hostile SQL: seed ${SEED} (HOSTILE_SQL_SEED=${SEED} repeats this run)`);

describe('the SQL sandbox under generated hostile statements', () => {
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
  });
  afterAll(() => target.stop());

  test("the canaries are where the statements aim: the service's environment, the file in DATA_DIR, the victim's events", async () => {
    const found = (text: string) => canariesIn(text, target.canaries, '');
    // The admin key is not among them: the service overwrites it in its start-up environment.
    expect(found(readFileSync(`/proc/${target.pid}/environ`, 'latin1'))).toEqual(['the data directory', "a variable of the service's environment"]);
    expect(found(readFileSync(target.terrain.canaryFile, 'utf8'))).toEqual(['the canary file in DATA_DIR']);
    const victimRows = await callApi(target.url, target.victimKey, 'POST', '/queries', { queries: ['SELECT event, userId, properties FROM events'] });
    expect(found(JSON.stringify(victimRows))).toEqual(["the victim's event name", "the victim's userId", "the victim's property"]);
  });

  test(`${COUNT} statements through the five doors: no canary comes back, no 5xx, no file written`, async () => {
    const report = await runCampaign(target, SEED, COUNT);
    console.log(summarize(report));
    if (report.breaches.length > 0) {
      const { productions, canaries } = breachTally(report);
      console.log(`breaches by canary: ${JSON.stringify(Object.fromEntries(canaries))}`);
      console.log(`breaches by production: ${JSON.stringify(Object.fromEntries([...productions].sort((a, b) => b[1] - a[1])))}`);
    }
    for (const finding of [...report.breaches.slice(0, PRINTED), ...report.faults.slice(0, PRINTED)]) console.log(describeFinding(finding));
    expect(report.breaches.length).toBe(0);
    expect(report.faults.length).toBe(0);
    expect(target.outfiles()).toEqual([]);
    for (const door of DOORS) expect({ door, ran: (report.benign.get(door)?.ran ?? 0) > 0 }).toEqual({ door, ran: true });
  }, 900_000);
});

describe('the hostile-SQL grammar', () => {
  const terrain: Terrain = { own: 'own', other: 'other', meta: 'meta', dataDir: '/data', canaryFile: '/data/canary', canaryFileFromCwd: '../data/canary', outfileDir: '/out' };

  test('gives statement i of a seed again on its own, whatever was generated before', () => {
    const first = Array.from({ length: 200 }, (_, i) => hostileStatement(7, i, doorOf(i), terrain));
    expect(hostileStatement(7, 150, doorOf(150), terrain)).toEqual(first[150]!);
    expect(new Set(first.map((s) => s.sql)).size).toBeGreaterThan(150);
  });

  test('reaches the attacks the fuzzer is for, and benign statements', () => {
    const picked = new Set<string>();
    let benign = 0;
    for (let i = 0; i < 5000; i++) {
      const statement = hostileStatement(11, i, doorOf(i), terrain);
      for (const name of statement.productions) picked.add(name);
      if (statement.benign) benign++;
    }
    for (const name of ['tf:generateRandom', 'tf:values', 'tf:format', 'tf:null', 'structure:ALIAS', 'structure:DEFAULT', 'structure:MATERIALIZED', 'fn:file', 'payload:column-transformer', 'param:Identifier', 'param:String', 'tail:into-outfile', 'settings:clause', 'item:alias-shadows-table', 'expr:scalar-subquery-in-cast']) {
      expect(picked).toContain(name);
    }
    expect(benign).toBeGreaterThan(0);
  });
});
