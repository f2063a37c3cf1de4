/**
 * `npm run bench:sql-guard`: what the SQL guard costs a statement that is not in the verdict cache
 * (a statement seen for the first time in the last minute): the guard alone
 * (src/queries/sql-guard.ts, on a sandbox of the service's settings) against running the
 * statement on the engine alone, for statements of the SQL cookbook's kinds over a small events
 * table (the guard's cost does not depend on the data). Prints a Markdown table.
 * `--smoke` runs it briefly, so CI keeps the script working; its figures mean nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { silentLogger } from '../src/log';
import { guardStatement } from '../src/queries/sql-guard';
import { startService } from '../src/service';
import { KEYS, ROOT } from './lib/processes';
import { STATEMENTS as COOKBOOK } from './lib/sql-statements';
import { median, ms, timeInTurn } from './lib/stats';

const smoke = process.argv.includes('--smoke');
const ITERATIONS = smoke ? 3 : 200;

/** The benchmark's statements of the SQL cookbook, and two with more syntax to judge. */
const STATEMENTS: Array<[string, string]> = [
  ...COOKBOOK,
  [
    'a funnel with windowFunnel and a CTE',
    `WITH steps AS (SELECT userId, windowFunnel(86400)(toDateTime(timestamp), event = 'signup', event = 'purchase') AS level FROM events GROUP BY userId)
     SELECT level, count() AS users FROM steps GROUP BY level ORDER BY level`,
  ],
  ['arrays and a lambda', "SELECT arrayMap(x -> upper(x), groupUniqArray(10)(event)) AS events, CAST(count(), 'Nullable(UInt64)') AS n FROM events"],
];

const dataDir = mkdtempSync(join(tmpdir(), 'analytics-bench-sql-guard-'));
try {
  const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private });
  const svc = await startService(config, silentLogger);
  const database = config.defaultWorkspaceDatabase;
  const limits = { timeoutMs: config.queryTimeoutMs, maxResultRows: config.queryMaxResultRows, maxResultBytes: config.queryMaxResultBytes, maxMemoryBytes: config.queryMaxMemoryBytes };
  const sandbox = svc.storage.openSandbox(limits);
  const rows = [`| Statement | The guard | Running it on the engine alone |`, `|---|---|---|`];
  const guard: number[] = [];
  for (const [what, statement] of STATEMENTS) {
    const [guarded, ran] = await timeInTurn([() => guardStatement(sandbox, database, statement), () => sandbox.run(database, statement)], ITERATIONS);
    guard.push(median(guarded!));
    rows.push(`| ${what} | ${ms(median(guarded!))} | ${ms(median(ran!))} |`);
  }
  await sandbox.close();
  await svc.stop();
  console.log(`${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${ITERATIONS} rounds, medians, an empty events table`);
  console.log(rows.join('\n'));
  console.log(`\nThe guard, median over the statements: ${ms(median(guard))}`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
