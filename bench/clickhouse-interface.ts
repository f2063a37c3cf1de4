/**
 * `npm run bench:clickhouse`: the same statements over 10 million events of the benchmark's mix,
 * timed through ClickHouse's HTTP interface (/clickhouse), through POST /queries, and on the
 * engine alone (a sandbox of the same settings, without the guard or HTTP), alternately, so that
 * the three meet the same caches and the same moment of a noisy machine. Prints a Markdown table.
 * `--smoke` runs it briefly on little data, so CI keeps the script working; its figures mean nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { silentLogger } from '../src/log';
import { startService as startServiceHere } from '../src/service';
import { bulkWorkspace } from './lib/bulk-workspace';
import { KEYS, ROOT } from './lib/processes';
import { median, ms, percentile } from './lib/stats';
import { STATEMENTS } from './lib/sql-statements';

const smoke = process.argv.includes('--smoke');
const EVENTS = smoke ? 20_000 : 10_000_000;
const ITERATIONS = smoke ? 3 : 20;
const DATABASE = 'bench_clickhouse_interface';


const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-clickhouse-'));
const started = Date.now();
const rows: string[] = [];
try {
  const dataDir = join(workDir, 'data');
  console.error(`generating ${EVENTS.toLocaleString('en-US')} events in ${workDir}`);
  const { key } = await bulkWorkspace(dataDir, DATABASE, EVENTS);
  // The same statement each way: no property read stored in a column (bench/properties.ts measures those).
  const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private, PROPERTY_COLUMNS_MAX: '0' });
  const svc = await startServiceHere(config, silentLogger);
  const sandbox = svc.storage.openSandbox({ timeoutMs: config.queryTimeoutMs, maxResultRows: config.queryMaxResultRows, maxResultBytes: config.queryMaxResultBytes, maxMemoryBytes: config.queryMaxMemoryBytes });
  const ways: Array<[string, (statement: string) => Promise<unknown>]> = [
    ['/clickhouse (JSONEachRow)', (statement) => answered(fetch(`${svc.url}/clickhouse?default_format=JSONEachRow`, { method: 'POST', headers: { authorization: `Basic ${btoa(`default:${key}`)}` }, body: statement }))],
    ['POST /queries', (statement) => answered(fetch(`${svc.url}/queries`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ queries: [statement] }) }))],
    ['engine alone', (statement) => sandbox.run(DATABASE, statement)],
  ];
  for (const [what, statement] of STATEMENTS) {
    const times = ways.map(() => [] as number[]);
    // Two rounds of warm-up, then each way in turn, round after round.
    for (let i = -2; i < ITERATIONS; i++) {
      for (const [w, [, run]] of ways.entries()) {
        const t0 = performance.now();
        await run(statement);
        if (i >= 0) times[w]!.push(performance.now() - t0);
      }
    }
    const alone = median(times[2]!);
    rows.push(`| ${what} | ${times.map((t) => `${ms(median(t))} (p95 ${ms(percentile(t, 0.95))})`).join(' | ')} | ${(median(times[0]!) / alone).toFixed(2)}× |`);
    console.error(`  ${what}: done`);
  }
  await sandbox.close();
  await svc.stop();
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const cpu = cpus();
console.log(`ClickHouse interface benchmark of ${new Date().toISOString().slice(0, 10)} on ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; ${EVENTS.toLocaleString('en-US')} events; median of ${ITERATIONS} rounds; ${Math.round((Date.now() - started) / 1000)} s${smoke ? '; SMOKE RUN, figures meaningless' : ''}\n`);
console.log('| Statement | /clickhouse (JSONEachRow) | POST /queries | Engine alone | /clickhouse ÷ engine |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);

/** Resolves once the whole answer is read; a refusal fails the benchmark. */
async function answered(request: Promise<Response>): Promise<void> {
  const res = await request;
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.url}: ${res.status}: ${text.slice(0, 300)}`);
}
