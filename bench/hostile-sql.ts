/**
 * `npm run bench:hostile-sql`: the SQL sandbox fuzzer of `npm test` (tests/queries/hostile-sql.test.ts)
 * run long: `HOSTILE_SQL_COUNT` statements (default 100,000) of the hostile grammar through the
 * five doors, seeded (`HOSTILE_SQL_SEED`, else random; printed). Prints statements per second,
 * outcomes by door and status, refusals by reason, the benign statements that ran, and every
 * canary found with the statement that brought it back. Exits 1 on a breach, a 5xx or a written
 * file. `--smoke` runs 500 statements, so CI keeps the script working.
 */
import { breachTally, describeFinding, runCampaign, summarize } from '../tests/queries/hostile-sql/campaign';
import { startTarget } from '../tests/queries/hostile-sql/target';

const smoke = process.argv.includes('--smoke');
const COUNT = smoke ? 500 : Number(process.env.HOSTILE_SQL_COUNT ?? 100_000);
const SEED = process.env.HOSTILE_SQL_SEED ? Number(process.env.HOSTILE_SQL_SEED) : Math.floor(Math.random() * 2 ** 31);
/** Findings printed at most, of each kind. */
const PRINTED = 50;

console.error(`hostile SQL${smoke ? ' (smoke)' : ''}: ${COUNT} statements, seed ${SEED} (HOSTILE_SQL_SEED=${SEED} repeats this run)`);
const target = await startTarget();
let failed = false;
try {
  const report = await runCampaign(target, SEED, COUNT, (done) => console.error(`  ${done} statements`));
  console.log(summarize(report));
  console.log('\nRefusals (403) by reason:');
  for (const [reason, n] of [...report.refusals].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(7)}  ${reason}`);
  const { productions, canaries } = breachTally(report);
  console.log(`\nCanaries found: ${report.breaches.length === 0 ? 'none' : JSON.stringify(Object.fromEntries(canaries))}`);
  if (report.breaches.length > 0) {
    console.log('Breaches by production:');
    for (const [name, n] of [...productions].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(7)}  ${name}`);
  }
  for (const finding of [...report.breaches.slice(0, PRINTED), ...report.faults.slice(0, PRINTED)]) console.log(describeFinding(finding));
  const written = target.outfiles();
  if (written.length > 0) console.log(`Files written by statements: ${written.join(', ')}`);
  failed = report.breaches.length > 0 || report.faults.length > 0 || written.length > 0;
} finally {
  await target.stop();
}
process.exit(failed ? 1 : 0);
