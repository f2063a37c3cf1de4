/**
 * `npm run bench`: measures the service against baselines taken in the same run on the same
 * machine, and prints one table (Markdown). `--smoke` runs every step briefly on little data, so
 * CI keeps the scripts working; its figures mean nothing. `--before <git-ref>` also runs the
 * single-event phase on the service of that commit (a temporary worktree) and prints the parts
 * per second the engine creates before and after. `--only batched` runs the raw engine's baseline
 * and the batched phase alone (with its memory), to bisect batched ingest in a few minutes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { listingStatements } from '../src/events/list-events';
import type { ListEventsQuery } from '../src/events/model';
import { silentLogger } from '../src/log';
import { startService as startServiceHere } from '../src/service';
import { eventsBody, trackCallBody } from './lib/event-mix';
import { atRate, generator, maxRate, type LoadRequest, type LoadResult } from './lib/load';
import { commitOf, committedInserts, exitOnSignal, freePort, KEYS, ROOT, runScript, sampleRss, startBareServer, startService, worktreeOf, type Running } from './lib/processes';
import { median, mib, ms, percentile, rate, slope } from './lib/stats';

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const beforeFlag = args.findIndex((a) => a === '--before' || a.startsWith('--before='));
const beforeRef = beforeFlag < 0 ? undefined : args[beforeFlag]!.startsWith('--before=') ? args[beforeFlag]!.slice('--before='.length) : args[beforeFlag + 1];
if (beforeFlag >= 0 && (!beforeRef || beforeRef.startsWith('--'))) throw new Error('--before needs a git ref, such as --before 07fa903');
const onlyFlag = args.indexOf('--only');
const only = onlyFlag < 0 ? undefined : args[onlyFlag + 1];
if (onlyFlag >= 0 && only !== 'batched') throw new Error('--only takes one phase: batched');
// Resolved now, so that a mistyped ref fails at once rather than after the baselines.
const beforeCommit = beforeRef ? commitOf(beforeRef) : undefined;
const PLAN = smoke
  ? { loadSeconds: 2, sustainSeconds: 4, warmSeconds: 1, sizes: [10_000, 20_000], iterations: 5 }
  : // 30 s of warm-up: the engine's caches fill during the first ~40 s of ingest.
    { loadSeconds: 15, sustainSeconds: 60, warmSeconds: 30, sizes: [1_000_000, 10_000_000], iterations: 60 };
/**
 * Rounds of each comparison with the bare server, and seconds of load in each. This machine's
 * speed drifts by a third within a minute (measured: the same bare server at 24,000 and 42,000
 * requests/s a few minutes apart), so one long run of each, minutes apart, compares two different
 * machines. Each round runs the bare server and a fresh service back to back, after a second of
 * the same load for each, and the median of the rounds' ratios is reported.
 */
const ROUNDS = smoke ? 1 : 5;
const ROUND_SECONDS = smoke ? 2 : 6;
const CONNECTIONS = 64;
/** Many clients at once: what a public collection endpoint sees. */
const WIDE = 512;
const BATCH = 100;

/** A comparison of the service with the bare server: the round that stands for all, and every round's ratio. */
interface VersusBare {
  service: LoadResult;
  bare: LoadResult;
  ratio: number;
  ratios: number[];
}

const rows: Array<[string, string, string, string, string]> = [];
const row = (what: string, service: string, baseline = '', ratio = '', target = '') => {
  rows.push([what, service, baseline, ratio, target]);
  console.error(`  ${what}: ${service}${baseline ? ` (baseline ${baseline})` : ''}`);
};

const ingest = (url: string, events: number): LoadRequest => ({
  url: `${url}/events`,
  body: eventsBody(events),
  headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.public}` },
});
const track = (url: string): LoadRequest => ({
  url: `${url}/v1/track`,
  body: trackCallBody(),
  // As Segment's SDKs send it: HTTP Basic, the write key as the user name.
  headers: { 'content-type': 'application/json', authorization: `Basic ${btoa(`${KEYS.public}:`)}` },
});
const mark = (ok: boolean) => (ok ? '✓' : '✗');
const atLeast = (ratio: number, target: number) => `≥ ${target.toFixed(2)} ${mark(ratio >= target)}`;
const latency = (r: LoadResult) => `p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}${r.failures ? `, ${r.failures} failed` : ''}${r.unsent ? `, ${r.unsent} not sent (the generator at its limit of requests in flight)` : ''}`;

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-'));
const removeWorkDir = () => rmSync(workDir, { recursive: true, force: true });
process.on('exit', removeWorkDir).on('SIGINT', exitOnSignal).on('SIGTERM', exitOnSignal);
const dataDir = join(workDir, 'data');
const started = Date.now();
console.error(`benchmark${smoke ? ' (smoke)' : ''}: load from ${generator}, data in ${workDir}`);

try {
  // Baselines first, each alone on the machine.
  console.error('baselines');
  const done = <T extends LoadResult>(what: string, r: T): T => {
    console.error(`    ${what}: ${rate(r.okPerSecond)}, ${latency(r)}`);
    return r;
  };
  const rawInsert = (name: string, rows: number, concurrency: number) =>
    runScript<{ rowsPerSecond: number }>('bench/baselines/raw-insert.ts', [join(workDir, name), String(PLAN.loadSeconds), String(rows), String(concurrency)]);
  const raw = await rawInsert('raw', 5000, 1);
  /** The batched phase's rows: its rate against the raw engine's, and the memory it took. */
  const batchedRows = (batched: LoadResult, rssSamples: number[]) => {
    const batchedEvents = batched.okPerSecond * BATCH;
    const batchedRatio = batchedEvents / raw.rowsPerSecond;
    row(`Ingest, batched: ${BATCH} events/request, ${CONNECTIONS} connections (events/s)`, rate(batchedEvents), `${rate(raw.rowsPerSecond)} raw engine, 5,000-row inserts`, batchedRatio.toFixed(2), atLeast(batchedRatio, 0.7));
    // RSS rises while the engine's caches fill, then saws up and down with garbage collection and
    // merges: the trend over the second half (least squares, one sample a second) says whether it grows.
    const lastHalf = rssSamples.slice(Math.floor(rssSamples.length / 2));
    const trend = slope(lastHalf) * lastHalf.length;
    row(
      `Memory: RSS during ${PLAN.sustainSeconds} s of batched ingest at the maximum rate`,
      `peak ${mib(Math.max(...rssSamples))}; over the last ${lastHalf.length} s: median ${mib(median(lastHalf))}, trend ${trend >= 0 ? '+' : '−'}${mib(Math.abs(trend))}`,
      '',
      '',
      '< 1 GiB, flat',
    );
  };
  // What single events need: a commit per request, 64 requests in flight: two inserts of 32 rows.
  const rawSmall = only === 'batched' ? { rowsPerSecond: NaN } : await rawInsert('raw-small', CONNECTIONS / 2, 2);

  // Ingestion, each phase on a fresh data directory, so none runs beside the last one's merges.
  console.error('ingestion');
  let phase = 0;
  async function onFreshService<T>(work: (svc: Running) => Promise<T>, root = ROOT): Promise<T> {
    const svc = await startService(join(workDir, `ingest-${phase++}`), await freePort(), {}, root);
    try {
      return await work(svc);
    } finally {
      await svc.stop();
    }
  }
  /** Single events at `CONNECTIONS`, with the inserts (= new parts) the service commits meanwhile, from its /metrics. */
  async function singleWithParts(svc: Running) {
    const before = await committedInserts(svc.url);
    const t0 = performance.now();
    const load = await maxRate(ingest(svc.url, 1), CONNECTIONS, PLAN.loadSeconds);
    const inserts = (await committedInserts(svc.url)) - before;
    const seconds = (performance.now() - t0) / 1000;
    console.error(`    inserts committed (= new parts): ${inserts} in ${seconds.toFixed(1)} s`);
    return { load, inserts, seconds, partsPerSecond: inserts / seconds };
  }
  const { batched, rssSamples } = await onFreshService(async (svc) => {
    await maxRate(ingest(svc.url, BATCH), CONNECTIONS, PLAN.warmSeconds);
    const rss = sampleRss(svc.proc.pid);
    return { batched: await maxRate(ingest(svc.url, BATCH), CONNECTIONS, PLAN.sustainSeconds), rssSamples: rss.stop() };
  });
  console.error(`    batched, ${BATCH} events/request: ${rate(batched.okPerSecond * BATCH)} events, ${latency(batched)}`);
  if (only === 'batched') {
    batchedRows(batched, rssSamples);
    row('POST /events latency, batched, at the maximum rate', latency(batched));
    printTable();
    process.exit(0);
  }
  const parts = await onFreshService(singleWithParts);
  const single = done(`service, POST /events, 1 event, ${CONNECTIONS} connections`, parts.load);
  let before: { ref: string; commit: string; parts: typeof parts } | undefined;
  if (beforeRef && beforeCommit) {
    const treeDir = join(workDir, 'before');
    const tree = worktreeOf(beforeCommit, treeDir);
    try {
      console.error(`    the service of ${beforeRef} (${beforeCommit}), in a temporary worktree:`);
      const partsThen = await onFreshService(singleWithParts, treeDir);
      done(`service of ${beforeRef}, POST /events, 1 event, ${CONNECTIONS} connections`, partsThen.load);
      before = { ref: beforeRef, commit: beforeCommit, parts: partsThen };
    } finally {
      tree.remove();
    }
  }

  console.error(`single events against a bare Bun server: ${ROUNDS} rounds of ${ROUND_SECONDS} s each, back to back`);
  const bare = await startBareServer(await freePort());
  /** The service and the bare server under the same load, round by round; the round of the median ratio stands for all. */
  async function versusBare(what: string, request: (url: string) => LoadRequest, connections: number): Promise<VersusBare> {
    const rounds: VersusBare[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await maxRate(request(bare.url), connections, 1);
      const bareRun = await maxRate(request(bare.url), connections, ROUND_SECONDS);
      const service = await onFreshService(async (svc) => {
        await maxRate(request(svc.url), connections, 1);
        return maxRate(request(svc.url), connections, ROUND_SECONDS);
      });
      const ratio = service.okPerSecond / bareRun.okPerSecond;
      console.error(`    ${what}, ${connections} connections, round ${r + 1}: service ${rate(service.okPerSecond)} (${latency(service)}), bare ${rate(bareRun.okPerSecond)}: ${ratio.toFixed(2)}`);
      rounds.push({ service, bare: bareRun, ratio, ratios: [] });
    }
    const byRatio = [...rounds].sort((a, b) => a.ratio - b.ratio);
    return { ...byRatio[Math.floor(byRatio.length / 2)]!, ratios: rounds.map((r) => r.ratio) };
  }
  const singleWide = await versusBare('POST /events, 1 event', (url) => ingest(url, 1), WIDE);
  const singleNarrow = await versusBare('POST /events, 1 event', (url) => ingest(url, 1), CONNECTIONS);
  const trackWide = await versusBare('POST /v1/track', track, WIDE);
  const trackSingle = await versusBare('POST /v1/track', track, CONNECTIONS);
  await bare.stop();
  const batchedHalf = await onFreshService((svc) => atRate(ingest(svc.url, BATCH), batched.okPerSecond / 2, PLAN.loadSeconds));
  const singleHalf = await onFreshService((svc) => atRate(ingest(svc.url, 1), single.okPerSecond / 2, PLAN.loadSeconds));

  batchedRows(batched, rssSamples);
  const againstBare = (what: string, connections: number, { service, bare: bareRun, ratio, ratios }: VersusBare, p50Target: boolean) => {
    const spread = ratios.length > 1 ? ` (median of ${ratios.length} rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})` : '';
    row(
      `Ingest, single events: ${what}, ${connections} connections (requests/s${p50Target ? '; p50' : ''})`,
      p50Target ? `${rate(service.okPerSecond)}; p50 ${ms(service.p50Ms)}` : rate(service.okPerSecond),
      p50Target ? `${rate(bareRun.okPerSecond)}; p50 ${ms(bareRun.p50Ms)} bare Bun server` : `${rate(bareRun.okPerSecond)} bare Bun server`,
      `${ratio.toFixed(2)}${spread}`,
      p50Target ? `p50 < 5 ms ${mark(service.p50Ms < 5)}` : atLeast(ratio, 0.5),
    );
  };
  againstBare('POST /events, 1 event', WIDE, singleWide, false);
  againstBare('POST /events, 1 event', CONNECTIONS, singleNarrow, true);
  againstBare('POST /v1/track, 1 call', WIDE, trackWide, false);
  againstBare('POST /v1/track, 1 call', CONNECTIONS, trackSingle, true);
  const perSecond = (n: number) => (Number.isNaN(n) ? 'n/a (no analytics_ingest_flush_rows in /metrics)' : `${n.toFixed(1)}/s`);
  const partsLabel = `Parts created per second under single-event load (POST /events, 1 event, ${CONNECTIONS} connections): committed inserts/s, analytics_ingest_flush_rows_count in /metrics; each insert writes one new part per partition it touches`;
  if (before) {
    const ratio = parts.partsPerSecond / before.parts.partsPerSecond;
    row(
      partsLabel,
      `after: ${perSecond(parts.partsPerSecond)} (${parts.inserts} in ${parts.seconds.toFixed(1)} s, at ${rate(single.okPerSecond)})`,
      `before (${before.ref}${before.commit.startsWith(before.ref) ? '' : `, ${before.commit}`}): ${perSecond(before.parts.partsPerSecond)} (${before.parts.inserts} in ${before.parts.seconds.toFixed(1)} s, at ${rate(before.parts.load.okPerSecond)})`,
      Number.isFinite(ratio) ? `${ratio.toFixed(3)} after/before` : 'n/a',
      `≤ 0.10 (an order of magnitude fewer) ${Number.isFinite(ratio) ? mark(ratio <= 0.1) : ''}`.trim(),
    );
  } else {
    row(partsLabel, `${perSecond(parts.partsPerSecond)} (${parts.inserts} in ${parts.seconds.toFixed(1)} s)`, '', '', '(--before <git-ref> to compare with a commit)');
  }
  row(
    `Ingest, single events, against what the engine can commit (requests/s)`,
    rate(single.okPerSecond),
    `${rate(rawSmall.rowsPerSecond)} raw engine, ${CONNECTIONS / 2}-row inserts, 2 at a time`,
    (single.okPerSecond / rawSmall.rowsPerSecond).toFixed(2),
    '(the ceiling while each 201 waits for its commit)',
  );
  row('POST /events latency, batched, at the maximum rate', latency(batched));
  row(`POST /events latency, batched, at half (${rate(batched.okPerSecond / 2)})`, latency(batchedHalf));
  row(`POST /events latency, single, at the maximum rate, ${CONNECTIONS} connections`, latency(single));
  row(`POST /events latency, single, at the maximum rate, ${WIDE} connections`, latency(singleWide.service));
  row(`POST /events latency, single, at half (${rate(single.okPerSecond / 2)})`, latency(singleHalf));
  row(`POST /v1/track latency, at the maximum rate, ${CONNECTIONS} connections`, latency(trackSingle.service));
  row(`POST /v1/track latency, at the maximum rate, ${WIDE} connections`, latency(trackWide.service));

  // Reads: workspaces of each size, filled by the engine itself while the service is stopped.
  console.error('reads: generating data');
  const creator = await startService(dataDir, await freePort());
  const spaces: Array<{ size: number; database: string; key: string }> = [];
  for (const size of PLAN.sizes) {
    const database = `bench_${size}`;
    const res = await fetch(`${creator.url}/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.private}` },
      body: JSON.stringify({ name: database, databaseName: database }),
    });
    spaces.push({ size, database, key: ((await res.json()) as { privateApiKey: string }).privateApiKey });
  }
  await creator.stop();
  for (const s of spaces) await runScript('bench/data/generate.ts', [dataDir, s.database, String(s.size)]);

  // The service now runs in this process, still answering over HTTP, so that each request can be
  // timed beside the very engine calls it makes, alternately, on the same engine and caches.
  console.error('reads: the service and the engine alone, alternately');
  // The service runs the very statements the engine alone does: no property read stored in a
  // column (bench/properties.ts measures those).
  const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), {
    PROPERTY_COLUMNS_MAX: '0',
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_API_KEYS: KEYS.public,
    PRIVATE_API_KEYS: KEYS.private,
  });
  const svc = await startServiceHere(config, silentLogger);
  const sandbox = svc.storage.openSandbox({
    timeoutMs: config.queryTimeoutMs,
    maxResultRows: config.queryMaxResultRows,
    maxResultBytes: config.queryMaxResultBytes,
    maxMemoryBytes: config.queryMaxMemoryBytes,
  });
  const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  async function compare(name: string, request: () => Promise<Response>, engineAlone: () => Promise<unknown>) {
    const service: number[] = [];
    const alone: number[] = [];
    for (let i = -2; i < PLAN.iterations; i++) {
      let t0 = performance.now();
      const res = await request();
      const text = await res.text();
      if (!res.ok) throw new Error(`${name}: ${res.status}: ${text.slice(0, 300)}`);
      if (i >= 0) service.push(performance.now() - t0);
      t0 = performance.now();
      await engineAlone();
      if (i >= 0) alone.push(performance.now() - t0);
    }
    const [s, e] = [median(service), median(alone)];
    const allowed = e * 1.25 + 2;
    row(
      `${name} (p50, p95)`,
      `${ms(s)}, ${ms(percentile(service, 0.95))}`,
      `${ms(e)}, ${ms(percentile(alone, 0.95))} engine alone`,
      `${s >= e ? '+' : '−'}${ms(Math.abs(s - e))} (${(s / e).toFixed(2)}×)`,
      `p50 ≤ ${ms(allowed)} ${s <= allowed ? '✓' : '✗'}`,
    );
  }
  const sample = async (database: string) =>
    JSON.parse(
      (await sandbox.run(database, "SELECT toString(uuid) AS uuid, userId FROM events WHERE userId != '' ORDER BY cityHash64(uuid) LIMIT 1")).trim(),
    ) as { uuid: string; userId: string };
  const label = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`);
  const today = new Date().toISOString().slice(0, 10);
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
  for (const s of spaces) {
    const { uuid, userId } = await sample(s.database);
    const listings: Array<[string, Record<string, string>]> = [
      ['lookup by uuid', { uuid }],
      ['filter by userId', { userId }],
      ['filter by event and a 7-day range', { event: 'purchase', startDate: weekAgo, endDate: today }],
      ['default listing (1,000 newest and the total)', {}],
    ];
    for (const [what, query] of listings) {
      // The engine alone: the two statements GET /events runs, as it runs them.
      const { rows, count } = listingStatements(s.database, query as ListEventsQuery);
      await compare(
        `GET /events on ${label(s.size)} events: ${what}`,
        () => fetch(`${svc.url}/events?${new URLSearchParams(query)}`, { headers: auth(s.key) }),
        () => Promise.all([svc.storage.queryLines(rows.sql, rows.params), svc.storage.query(count.sql, count.params)]),
      );
    }
  }
  const last = spaces[spaces.length - 1]!;
  const statements: Array<[string, string]> = [
    ['column filter', `SELECT uuid, event, timestamp FROM events WHERE userId = 'user_4242' ORDER BY timestamp DESC LIMIT 100`],
    ['JSONExtract comparison', `SELECT count() AS n FROM events WHERE event = 'purchase' AND JSONExtract(properties, 'amount', 'Float64') > 250`],
    [
      'LEFT JOIN with identify rows on userId',
      `SELECT e.event, JSONExtractString(i.traits, 'plan') AS plan, count() AS n FROM events AS e
       LEFT JOIN (SELECT userId, any(traits) AS traits FROM events WHERE type = 'identify' GROUP BY userId) AS i ON e.userId = i.userId
       WHERE e.type = 'track' AND e.timestamp >= now() - INTERVAL 7 DAY GROUP BY e.event, plan ORDER BY n DESC LIMIT 20`,
    ],
    ['daily active users, 30 days', `SELECT toDate(timestamp) AS day, uniqExact(userId) AS users FROM events WHERE timestamp >= now() - INTERVAL 30 DAY GROUP BY day ORDER BY day`],
  ];
  for (const [what, statement] of statements) {
    // The engine alone: the statement on a sandbox of the same settings, without the guard.
    await compare(
      `POST /queries on ${label(last.size)} events: ${what}`,
      () => fetch(`${svc.url}/queries`, { method: 'POST', headers: auth(last.key), body: JSON.stringify({ queries: [statement] }) }),
      () => sandbox.run(last.database, statement),
    );
  }
  const [disk] = await svc.storage.query(
    "SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows FROM system.parts WHERE database = {db:String} AND table = 'events' AND active",
    { db: last.database },
  );
  row(`Disk: bytes per stored event (${last.size.toLocaleString('en-US')} events of the mix)`, `${(Number(disk!.bytes) / Number(disk!.rows)).toFixed(1)} B`);
  await sandbox.close();
  await svc.stop();
} finally {
  removeWorkDir();
}

printTable();

function printTable(): void {
  const cpu = cpus();
  console.log(`Benchmark of ${new Date().toISOString().slice(0, 10)} on ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; load from ${generator}; ${Math.round((Date.now() - started) / 1000)} s${smoke ? '; SMOKE RUN, figures meaningless' : ''}\n`);
  console.log('| Measure | Service | Baseline (same run) | Ratio / overhead | Target |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}
