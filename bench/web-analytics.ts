/**
 * `bun bench/web-analytics.ts`: the console overview's questions, asked of Plausible's Stats API
 * v2 (`POST /api/v2/query`) over HTTP (checking, compiling, scheduling, running and shaping
 * included), on 10 million events of web traffic (bench/lib/web-mix.ts: visits of about five
 * events by 400,000 visitors over 30 days), next to the very statement it compiles run on the
 * engine alone (a sandbox session of the same settings, parameters bound), alternately. Prints a
 * Markdown table. `--smoke` runs it briefly on little data (CI keeps the script working); its
 * figures mean nothing. `--events=N` and `--rounds=N` change the size and the rounds,
 * `--memory=BYTES` and `--timeout=MS` the statements' limits (QUERY_MAX_MEMORY_BYTES,
 * QUERY_TIMEOUT_MS); `--warmups=N` the rounds run first and not counted (2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { silentLogger } from '../src/log';
import { startService as startServiceHere } from '../src/service';
import { compileStatsQuery } from '../src/web-analytics/stats/compile';
import { bulkWorkspace } from './lib/bulk-workspace';
import { KEYS, ROOT } from './lib/processes';
import { median, ms, percentile, timeInTurn } from './lib/stats';

const smoke = process.argv.includes('--smoke');
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const EVENTS = Number(option('events') ?? (smoke ? 20_000 : 10_000_000));
const ITERATIONS = Number(option('rounds') ?? (smoke ? 2 : 7));
const WARMUPS = Number(option('warmups') ?? 2);
const DATABASE = 'bench_web_analytics';
const SITE = 'example.com';

/** The overview's questions (console/src/views/overview), as Stats API v2 queries. */
const QUESTIONS: Array<{ name: string; body: Record<string, unknown> }> = [
  { name: 'aggregate metrics', body: { metrics: ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration'], date_range: '30d' } },
  { name: 'time series by day', body: { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration'], date_range: '30d', dimensions: ['time:day'] } },
  { name: 'top pages', body: { metrics: ['visitors', 'pageviews', 'bounce_rate'], date_range: '30d', dimensions: ['event:page'], pagination: { limit: 10 } } },
  { name: 'sources', body: { metrics: ['visitors', 'visits', 'bounce_rate'], date_range: '30d', dimensions: ['visit:source'], pagination: { limit: 10 } } },
  { name: 'countries', body: { metrics: ['visitors', 'percentage'], date_range: '30d', dimensions: ['visit:country'], pagination: { limit: 10 } } },
  { name: 'devices', body: { metrics: ['visitors', 'percentage'], date_range: '30d', dimensions: ['visit:device'] } },
  { name: 'entry pages', body: { metrics: ['visitors', 'visits', 'bounce_rate'], date_range: '30d', dimensions: ['visit:entry_page'], pagination: { limit: 10 } } },
  { name: 'exit pages', body: { metrics: ['visitors', 'visits'], date_range: '30d', dimensions: ['visit:exit_page'], pagination: { limit: 10 } } },
  { name: 'a filtered screen (country and page)', body: { metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration'], date_range: '30d', filters: [['is', 'visit:country', ['DE']], ['contains', 'event:page', ['/p/1']]] } },
];

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-web-'));
const started = Date.now();
const rows: string[] = [];
let generated = 0;
try {
  const dataDir = join(workDir, 'data');
  console.error(`generating ${EVENTS.toLocaleString('en-US')} events in ${workDir}`);
  const { key, seconds } = await bulkWorkspace(dataDir, DATABASE, EVENTS, 'web');
  generated = seconds;

  const memory = option('memory');
  const timeout = option('timeout');
  const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private, ...(memory ? { QUERY_MAX_MEMORY_BYTES: memory } : {}), ...(timeout ? { QUERY_TIMEOUT_MS: timeout } : {}) });
  const svc = await startServiceHere(config, silentLogger);
  const sandbox = svc.storage.openSandbox({ timeoutMs: config.queryTimeoutMs, maxResultRows: config.queryMaxResultRows, maxResultBytes: config.queryMaxResultBytes, maxMemoryBytes: config.queryMaxMemoryBytes });
  try {
    for (const question of QUESTIONS) {
      const body = { site_id: SITE, ...question.body };
      const ask = async () => {
        const res = await fetch(`${svc.url}/api/v2/query`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const text = await res.text();
        if (!res.ok) throw new Error(`${question.name}: ${res.status}: ${text.slice(0, 500)}`);
      };
      // The statement the service runs, compiled here once (the range is relative to now: the same days).
      const compiled = compileStatsQuery(body, { now: Date.now(), timezone: 'UTC', sessionTimeoutMinutes: config.sessionTimeoutMinutes });
      const alone = () => sandbox.inspect(DATABASE, compiled.sql, compiled.params);
      const [service, engine] = (await timeInTurn([ask, alone], ITERATIONS, WARMUPS)) as [number[], number[]];
      const [s, a] = [median(service), median(engine)];
      rows.push(`| ${question.name} | ${ms(s)} (p95 ${ms(percentile(service, 0.95))}) | ${ms(a)} (p95 ${ms(percentile(engine, 0.95))}) | ${(s / a).toFixed(2)}× |`);
      console.error(`  ${question.name}: service ${ms(s)}, the same SQL on the engine ${ms(a)}`);
    }
  } finally {
    await sandbox.close();
    await svc.stop();
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const cpu = cpus();
console.log(
  `Web analytics benchmark of ${new Date().toISOString().slice(0, 10)} on ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; ${EVENTS.toLocaleString('en-US')} events (generated in ${Math.round(generated)} s), 30 days; median of ${ITERATIONS} rounds; ${Math.round((Date.now() - started) / 1000)} s${smoke ? '; SMOKE RUN, figures meaningless' : ''}\n`,
);
console.log('| Overview question (POST /api/v2/query) | Service, over HTTP | The same SQL, engine alone | Ratio |');
console.log('|---|---|---|---|');
for (const row of rows) console.log(row);
