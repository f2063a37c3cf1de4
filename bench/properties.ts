/**
 * `npm run bench:properties`: what fast properties give and cost (docs/performance.md#fast-properties).
 * Prints (Markdown):
 * - on 10 million events of the benchmark's mix: a comparison, a breakdown and a sum, each on a
 *   property written with JSONExtract and on the plain column `event`, through POST /queries, in
 *   turn in every round (every round printed), once the reads are stored in columns; beside them
 *   the JSONExtract statement on the engine alone over the JSON text, as every read ran before;
 * - how long storing the three reads took on those events, and the disk per event before and after;
 * - batched ingest (100 events a request, 64 connections) into this service, with the three reads
 *   stored, and into the service of `--before <ref>` (default: the last commit without fast
 *   properties), in turn, each round on fresh data, every round printed.
 * `--smoke` runs every step briefly on little data (CI keeps the script working); its figures mean nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { silentLogger } from '../src/log';
import { readColumnName } from '../src/properties/json-read';
import { startService as startServiceHere } from '../src/service';
import { eventsBody } from './lib/event-mix';
import { maxRate } from './lib/load';
import { bulkWorkspace } from './lib/bulk-workspace';
import { commitOf, exitOnSignal, freePort, KEYS, ROOT, startService, worktreeOf } from './lib/processes';
import { median, ms, rate } from './lib/stats';

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const beforeFlag = args.indexOf('--before');
const beforeCommit = commitOf(beforeFlag >= 0 ? args[beforeFlag + 1]! : 'cee3f2f');
const PLAN = smoke ? { events: 20_000, iterations: 3, ingestRounds: 1, warmSeconds: 1, loadSeconds: 2 } : { events: 10_000_000, iterations: 15, ingestRounds: 5, warmSeconds: 5, loadSeconds: 20 };
const DATABASE = 'bench_properties';
const PLAN_READ = "JSONExtract(properties, 'plan', 'String')";
const AMOUNT_READ = "JSONExtract(properties, 'amount', 'Float64')";
/** Each read written with JSONExtract, and the same statement on the plain column `event`. */
const PAIRS: Array<{ name: string; property: string; column: string }> = [
  { name: 'comparison', property: `SELECT count() AS n FROM events WHERE ${PLAN_READ} = 'pro'`, column: "SELECT count() AS n FROM events WHERE event = 'purchase'" },
  { name: 'breakdown', property: `SELECT ${PLAN_READ} AS plan, count() AS n FROM events GROUP BY plan ORDER BY n DESC`, column: 'SELECT event, count() AS n FROM events GROUP BY event ORDER BY n DESC' },
  { name: 'sum', property: `SELECT sum(${AMOUNT_READ}) AS total FROM events`, column: 'SELECT sum(length(event)) AS total FROM events' },
];
const BATCH = 100;
const CONNECTIONS = 64;

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-properties-'));
process.on('exit', () => rmSync(workDir, { recursive: true, force: true })).on('SIGINT', exitOnSignal).on('SIGTERM', exitOnSignal);
const started = Date.now();
const out: string[] = [];
const say = (line: string) => {
  out.push(line);
  console.error(line);
};

/** POST /queries of one statement; throws unless it answers 200. */
async function ask(url: string, key: string, sql: string): Promise<void> {
  const res = await fetch(`${url}/queries`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ queries: [sql] }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${sql}: ${res.status}: ${text.slice(0, 300)}`);
}

/** Makes the bench's reads twice, then waits until their columns answer (they are added in the background). */
async function storeReads(url: string, key: string): Promise<void> {
  for (let i = 0; i < 2; i++) for (const { property } of PAIRS) await ask(url, key, property);
  const columns = [PLAN_READ, AMOUNT_READ].map(readColumnName).join(', ');
  for (let waited = 0; ; waited += 100) {
    const res = await fetch(`${url}/queries`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ queries: [`SELECT ${columns} FROM events LIMIT 0`] }) });
    await res.arrayBuffer();
    if (res.ok) return;
    if (waited > 60_000) throw new Error('the reads were not stored within a minute');
    await Bun.sleep(100);
  }
}

// Ingest: the two services in turn, each round on fresh data (the order alternates too).
say(`## Batched ingest, ${BATCH} events a request, ${CONNECTIONS} connections (wrk or Bun's fetch), before = ${beforeCommit}\n`);
const tree = worktreeOf(beforeCommit, join(workDir, 'before-checkout'));
let phase = 0;
async function ingestRate(root: string, stored: boolean): Promise<number> {
  const svc = await startService(join(workDir, `ingest-${phase++}`), await freePort(), {}, root);
  try {
    if (stored) await storeReads(svc.url, KEYS.private);
    const request = { url: `${svc.url}/events`, body: eventsBody(BATCH), headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.public}` } };
    await maxRate(request, CONNECTIONS, PLAN.warmSeconds);
    return (await maxRate(request, CONNECTIONS, PLAN.loadSeconds)).okPerSecond * BATCH;
  } finally {
    await svc.stop();
  }
}
const ingest = { before: [] as number[], after: [] as number[] };
for (let round = 0; round < PLAN.ingestRounds; round++) {
  const order = round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
  for (const which of order) ingest[which].push(await ingestRate(which === 'before' ? join(workDir, 'before-checkout') : ROOT, which === 'after'));
  say(`- round ${round + 1}: before ${rate(ingest.before.at(-1)!)}, after ${rate(ingest.after.at(-1)!)} events/s (${(ingest.after.at(-1)! / ingest.before.at(-1)!).toFixed(2)})`);
}
tree.remove();
const ingestRatio = median(ingest.after) / median(ingest.before);
say(`\nMedians: before ${rate(median(ingest.before))}, after ${rate(median(ingest.after))} events/s: ${ingestRatio.toFixed(2)} (target ≥ 0.90 ${ingestRatio >= 0.9 ? '✓' : '✗'})\n`);

// Reads: bulk data generated by the engine while the service is stopped, then the service here.
const dataDir = join(workDir, 'reads');
const { key } = await bulkWorkspace(dataDir, DATABASE, PLAN.events);
const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private });
const svc = await startServiceHere(config, silentLogger);
const sandbox = svc.storage.openSandbox({ timeoutMs: config.queryTimeoutMs, maxResultRows: config.queryMaxResultRows, maxResultBytes: config.queryMaxResultBytes, maxMemoryBytes: config.queryMaxMemoryBytes });
const bytesPerEvent = async () => {
  const [row] = await svc.storage.query("SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows FROM system.parts WHERE database = {db:String} AND table = 'events' AND active", { db: DATABASE });
  return Number(row!.bytes) / Number(row!.rows);
};
try {
  const diskBefore = await bytesPerEvent();
  const storing = performance.now();
  await storeReads(svc.url, key);
  for (;;) {
    const [row] = await svc.storage.query('SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done', { db: DATABASE });
    if (Number(row!.n) === 0) break;
    await Bun.sleep(200);
  }
  const storedSeconds = (performance.now() - storing) / 1000;
  const diskAfter = await bytesPerEvent();
  say(`## Reads on ${PLAN.events.toLocaleString('en-US')} events, POST /queries, ${PLAN.iterations} rounds after 2 of warm-up\n`);
  say(`Storing the two reads (${PLAN_READ}, ${AMOUNT_READ}) in columns, the events already stored included: ${storedSeconds.toFixed(1)} s. Disk: ${diskBefore.toFixed(1)} B an event before, ${diskAfter.toFixed(1)} B after (${(diskAfter / diskBefore).toFixed(3)}×, target ≤ 1.25 ${diskAfter / diskBefore <= 1.25 ? '✓' : '✗'}).\n`);
  const table: string[] = [];
  for (const pair of PAIRS) {
    const times = { property: [] as number[], column: [] as number[], text: [] as number[] };
    const runs: Array<[keyof typeof times, () => Promise<unknown>]> = [
      ['property', () => ask(svc.url, key, pair.property)],
      ['column', () => ask(svc.url, key, pair.column)],
      ['text', () => sandbox.run(DATABASE, pair.property)],
    ];
    const rounds: string[] = [];
    for (let i = -2; i < PLAN.iterations; i++) {
      for (const [which, run] of i % 2 === 0 ? runs : [...runs].reverse()) {
        const t0 = performance.now();
        await run();
        if (i >= 0) times[which].push(performance.now() - t0);
      }
      if (i >= 0) rounds.push((times.property.at(-1)! / times.column.at(-1)!).toFixed(2));
    }
    const ratio = median(times.property) / median(times.column);
    table.push(`| ${pair.name} | ${ms(median(times.property))} | ${ms(median(times.column))} | ${ratio.toFixed(2)}× ${ratio <= 2 ? '✓' : '✗'} | ${rounds.join(', ')} | ${ms(median(times.text))} |`);
    console.error(`  ${pair.name}: done`);
  }
  say('| Read | JSONExtract, stored (p50) | Plain column `event` (p50) | Ratio (target ≤ 2×) | Ratio in each round | JSONExtract on the text, engine alone (p50) |');
  say('|---|---|---|---|---|---|');
  for (const row of table) say(row);
} finally {
  await sandbox.close();
  await svc.stop();
}

const cpu = cpus();
console.log(`Fast properties benchmark of ${new Date().toISOString().slice(0, 10)} on ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; ${Math.round((Date.now() - started) / 1000)} s${smoke ? '; SMOKE RUN, figures meaningless' : ''}\n`);
for (const line of out) console.log(line);
