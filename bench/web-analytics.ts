/**
 * `bun bench/web-analytics.ts`: the console overview's questions, asked of Plausible's Stats API
 * v2 (`POST /api/v2/query`) over HTTP (checking, compiling, scheduling, running and shaping
 * included), on 10 million events of web traffic (bench/lib/web-mix.ts: visits of about five
 * events by 400,000 visitors over 30 days), next to the anchor: the same question answered on
 * the engine alone from a table of visits built as Plausible keeps its `sessions_v2`
 * (bench/lib/anchor-visits.ts, built untimed; its SQL in bench/lib/anchor-questions.ts),
 * alternately. Prints a Markdown table with whether the two answers are equal, and under it the
 * first row where they differ, and the fixed cost of a question: the service over a day without
 * events against `SELECT 1` on the engine. Before the rounds each question is asked twice, and the
 * columns that its reads of the events' JSON then get (fast properties) are waited for: the
 * rounds time the overview as a site that opens it daily meets it. `--smoke` runs it briefly on little data (CI keeps the
 * script working); its figures mean nothing. `--events=N` and `--rounds=N` change the size and
 * the rounds, `--memory=BYTES` and `--timeout=MS` the statements' limits
 * (QUERY_MAX_MEMORY_BYTES, QUERY_TIMEOUT_MS); `--warmups=N` the rounds run first and not counted (2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { silentLogger } from '../src/log';
import { startService as startServiceHere } from '../src/service';
import { toEngineDateTime } from '../src/timestamps';
import { resolveDateRange } from '../src/web-analytics/stats/date-range';
import { ANCHOR_SQL } from './lib/anchor-questions';
import { createAnchorTablesSql, fillAnchorEventsSql, fillAnchorVisitsSql } from './lib/anchor-visits';
import { firstDifference, rowsOfLines, type AnswerRow } from './lib/answer-rows';
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

/** Events per statement that builds the anchor's tables: memory stays modest. */
const EVENTS_PER_BUILD_STATEMENT = 1_000_000;
/** A question over a day without events, for the fixed cost of a question. */
const EMPTY_DAY = { metrics: ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration'], date_range: ['2000-01-01', '2000-01-01'] };

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-web-'));
const started = Date.now();
const rows: string[] = [];
/** Lines printed under the table: the fixed cost, then where answers differ. */
const notes: string[] = [];
const differences: string[] = [];
let generated = 0;
let anchorBuilt = 0;
try {
  const dataDir = join(workDir, 'data');
  console.error(`generating ${EVENTS.toLocaleString('en-US')} events in ${workDir}`);
  const { key, seconds } = await bulkWorkspace(dataDir, DATABASE, EVENTS, 'web');
  generated = seconds;

  const memory = option('memory');
  const timeout = option('timeout');
  const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private, ...(memory ? { QUERY_MAX_MEMORY_BYTES: memory } : {}), ...(timeout ? { QUERY_TIMEOUT_MS: timeout } : {}) });
  const svc = await startServiceHere(config, silentLogger);
  // The anchor's statements run with four times the service's memory limit: its filtered screen
  // (a set of the visits of matching events) needs over 1 GiB on 10 million events.
  const sandbox = svc.storage.openSandbox({ timeoutMs: config.queryTimeoutMs, maxResultRows: config.queryMaxResultRows, maxResultBytes: config.queryMaxResultBytes, maxMemoryBytes: config.queryMaxMemoryBytes * 4 });
  try {
    console.error('building the anchor\'s tables (untimed)');
    const buildStarted = performance.now();
    // The service's visits of the stored events are built first (as an existing install's are, in the background).
    const building = performance.now();
    while (!(await svc.visits.built(DATABASE))) await Bun.sleep(200);
    const builtIn = (performance.now() - building) / 1000;
    console.error(`visits built in ${builtIn.toFixed(1)} s`);
    notes.push(`The service's visits of the generated events were built in ${builtIn.toFixed(0)} s, in the background (as an existing install's are after the upgrade).`);
    for (const sql of createAnchorTablesSql(DATABASE)) await svc.storage.command(sql);
    const parts = Math.max(1, Math.ceil(EVENTS / EVENTS_PER_BUILD_STATEMENT));
    for (let part = 0; part < parts; part++) await svc.storage.command(fillAnchorEventsSql(DATABASE, config.sessionTimeoutMinutes, part, parts));
    for (let part = 0; part < parts; part++) await svc.storage.command(fillAnchorVisitsSql(DATABASE, part, parts));
    anchorBuilt = (performance.now() - buildStarted) / 1000;

    const ask = async (body: Record<string, unknown>): Promise<AnswerRow[]> => {
      const res = await fetch(`${svc.url}/api/v2/query`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ site_id: SITE, ...body }) });
      const text = await res.text();
      if (!res.ok) throw new Error(`${JSON.stringify(body)}: ${res.status}: ${text.slice(0, 500)}`);
      return (JSON.parse(text) as { results: AnswerRow[] }).results;
    };

    // The reads of the events' JSON that the questions make get columns from their second
    // statement on (fast properties, docs/architecture.md#fast-properties), filled in the
    // background: each question is asked twice and the filling waited for, so that the rounds time
    // the overview as a site opening it every day meets it, not the columns being filled.
    // Waited for after each question: the next one's first statement does not compete with the
    // filling of the columns (on a busy machine top pages then ran past the 30 s limit).
    const storing = performance.now();
    const pending = async () => Number((await svc.storage.query('SELECT count() AS n FROM system.mutations WHERE database = {database:String} AND NOT is_done', { database: DATABASE }))[0]!.n);
    for (const body of [EMPTY_DAY, ...QUESTIONS.map((q) => q.body)]) {
      for (let i = 0; i < 2; i++) await ask(body);
      while ((await pending()) > 0) await Bun.sleep(200);
    }
    const columns = (await svc.storage.query("SELECT count() AS n FROM system.columns WHERE database = {database:String} AND table = 'events' AND startsWith(name, 'property_read_')", { database: DATABASE }))[0]!.n;
    notes.push(`Before the rounds, each question was asked twice: the events' JSON reads they make got ${columns} columns (fast properties), filled in ${((performance.now() - storing) / 1000).toFixed(0)} s.`);

    const [service, engine] = (await timeInTurn([() => ask(EMPTY_DAY), () => sandbox.inspect(DATABASE, 'SELECT 1')], ITERATIONS, WARMUPS)) as [number[], number[]];
    notes.push(`Fixed cost of a question: the service answers the aggregate metrics over a day without events in ${ms(median(service))} (p95 ${ms(percentile(service, 0.95))}); the engine answers \`SELECT 1\` in ${ms(median(engine))} (p95 ${ms(percentile(engine, 0.95))}).`);

    // The process's resident memory (the engine's included) while the service answers, sampled.
    let serviceAsking = false;
    let peakRss = 0;
    const sampler = setInterval(() => {
      if (serviceAsking) peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }, 20);
    for (const question of QUESTIONS) {
      // The range the service resolves (relative to now: the same days unless midnight passes).
      const range = resolveDateRange(question.body.date_range, 'UTC', Date.now(), undefined);
      const params = { from: toEngineDateTime(BigInt(range.from) * 1000n), to: toEngineDateTime(BigInt(range.to) * 1000n + 999n) };
      const dimensions = ((question.body.dimensions as string[] | undefined) ?? []).length;
      let serviceAnswer: AnswerRow[] = [];
      let anchorAnswer: AnswerRow[] = [];
      const fromService = async () => {
        serviceAsking = true;
        try {
          serviceAnswer = await ask(question.body);
        } finally {
          serviceAsking = false;
        }
      };
      const fromAnchor = async () => void (anchorAnswer = rowsOfLines(await sandbox.inspect(DATABASE, ANCHOR_SQL[question.name]!, params), dimensions));
      const [service, anchor] = (await timeInTurn([fromService, fromAnchor], ITERATIONS, WARMUPS)) as [number[], number[]];
      const [s, a] = [median(service), median(anchor)];
      const difference = firstDifference(serviceAnswer, anchorAnswer);
      if (difference) differences.push(`- ${question.name}: ${difference}`);
      rows.push(`| ${question.name} | ${ms(s)} (p95 ${ms(percentile(service, 0.95))}) | ${ms(a)} (p95 ${ms(percentile(anchor, 0.95))}) | ${(s / a).toFixed(2)}× | ${difference ? 'no' : 'yes'} |`);
      console.error(`  ${question.name}: service ${ms(s)}, anchor ${ms(a)}${difference ? ', answers differ' : ''}`);
    }
    clearInterval(sampler);
    notes.push(`Memory: the process (service and engine) peaked at ${(peakRss / 2 ** 30).toFixed(2)} GiB resident while the service answered (sampled every 20 ms; the anchor's statements run in the same process, between).`);
  } finally {
    await sandbox.close();
    await svc.stop();
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const cpu = cpus();
console.log(
  `Web analytics benchmark of ${new Date().toISOString().slice(0, 10)} on ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; ${EVENTS.toLocaleString('en-US')} events (generated in ${Math.round(generated)} s, the anchor's tables built in ${Math.round(anchorBuilt)} s), 30 days; median of ${ITERATIONS} rounds; ${Math.round((Date.now() - started) / 1000)} s${smoke ? '; SMOKE RUN, figures meaningless' : ''}\n`,
);
console.log('| Overview question | Service (`POST /api/v2/query`, over HTTP) | Anchor (visits table, engine alone) | Ratio | Equal answers |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
if (notes.length > 0) console.log(`\n${notes.join('\n')}`);
if (differences.length > 0) console.log(`\nWhere the answers differ, the first row that does:\n${differences.join('\n')}`);
