/**
 * `npm run bench:first-touch [-- --events N] [--smoke]`: what first touch costs, computed when read
 * (the `person_first_touch` view: argMin over each person's events) against kept as events
 * arrive (an AggregatingMergeTree of argMinState per raw id, merged per person through the
 * lookup when read), on the web analytics benchmark's traffic (400,000 visitors, enriched
 * contexts). Prints (Markdown) p50 times of: a breakdown of every person by `$initial_source`
 * each way, beside `uniqExact(personId)` and the `persons` view's count; and the time to fill the
 * kept table from the events (what keeping it costs the engine at load, in one go).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { EVENT_ORDER_KEY } from '../src/insights/compile-context';
import { silentLogger } from '../src/log';
import { startService } from '../src/service';
import { bulkWorkspace } from './lib/bulk-workspace';
import { KEYS, ROOT } from './lib/processes';
import { median, ms } from './lib/stats';

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const eventsFlag = args.indexOf('--events');
const EVENTS = smoke ? 20_000 : Number(eventsFlag >= 0 ? args[eventsFlag + 1] : 2_000_000);
const ITERATIONS = smoke ? 2 : 7;
const DB = 'bench_first_touch';

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-first-touch-'));
process.on('exit', () => rmSync(workDir, { recursive: true, force: true }));

const generated = await bulkWorkspace(workDir, DB, EVENTS, 'web');
console.error(`${EVENTS.toLocaleString('en-US')} events generated in ${generated.seconds.toFixed(0)} s`);
const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: workDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private });
const svc = await startService(config, silentLogger);
const rows: string[] = [];
try {
  const run = (sql: string) => svc.storage.query(sql, {}, 'background');
  const time = async (sql: string) => {
    const samples: number[] = [];
    let answer: unknown;
    for (let i = -1; i < ITERATIONS; i++) {
      const t0 = performance.now();
      answer = await run(sql);
      if (i >= 0) samples.push(performance.now() - t0);
    }
    return { p50: median(samples), answer };
  };
  const row = (what: string, p50: number, note = '') => {
    rows.push(`| ${what} | ${ms(p50)} | ${note} |`);
    console.error(`  ${what}: ${ms(p50)} ${note}`);
  };
  const persons = await time(`SELECT uniqExact(personId) AS n FROM ${DB}.events_with_persons`);
  row('uniqExact(personId), every event', persons.p50, `${(persons.answer as Array<{ n: number }>)[0]!.n} persons`);
  row('count() of the `persons` view', (await time(`SELECT count() AS n FROM ${DB}.persons`)).p50);
  const atRead = await time(`SELECT \`$initial_source\` AS source, count() AS n FROM ${DB}.person_first_touch GROUP BY source ORDER BY source`);
  row('persons by `$initial_source`, computed when read (person_first_touch)', atRead.p50);

  // Kept as events arrive: argMinState per raw id; a person's first touch merges their ids' states.
  await run(`CREATE TABLE ${DB}.first_touch_kept (id String, first AggregateFunction(argMin, Tuple(String, String), UInt256)) ENGINE = AggregatingMergeTree ORDER BY id`).catch(() => undefined);
  const fill = performance.now();
  await svc.storage.command(
    `INSERT INTO ${DB}.first_touch_kept SELECT if(userId != '', userId, anonymousId) AS id, argMinState((context, properties), ${EVENT_ORDER_KEY}) FROM ${DB}.events GROUP BY id`,
    {},
    'background',
  );
  await svc.storage.command(`OPTIMIZE TABLE ${DB}.first_touch_kept FINAL`, {}, 'background');
  row('filling the kept table from every event (and merging it)', performance.now() - fill);
  const kept = await time(
    `SELECT JSONExtractString(f.1, 'source') AS source, count() AS n FROM (
       SELECT ifNull(joinGetOrNull('${DB}.person_lookup_anonymous', 'personId', id), id) AS personId, argMinMerge(first) AS f
       FROM ${DB}.first_touch_kept GROUP BY personId
     ) GROUP BY source ORDER BY source`,
  );
  row('persons by `$initial_source`, kept (argMinMerge per person)', kept.p50);
  if (JSON.stringify(kept.answer) !== JSON.stringify(atRead.answer)) console.error('  the two ways disagree:', JSON.stringify(kept.answer), JSON.stringify(atRead.answer));
} finally {
  await svc.stop();
}
console.log(`\nFirst touch on ${EVENTS.toLocaleString('en-US')} events, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}):\n`);
console.log('| | p50 | |');
console.log('|---|---|---|');
for (const r of rows) console.log(r);
