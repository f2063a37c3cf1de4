/**
 * `npm run bench:insights`: each insight over 10 million events of 100,000 persons over 90 days
 * (30% anonymous before they sign in: the persons benchmark's mix), asked of the service over
 * HTTP (compiling, scheduling, running and shaping included) and, alternately, the same question
 * written as tuned SQL on the engine alone (a sandbox session of the same settings). Target: the
 * service within 1.25× + 5 ms of the tuned SQL. Prints a Markdown table, and under it, where a
 * question has one, the tuned SQL written without a rule of the definition that costs it a read.
 * `--smoke` runs it briefly on little data (CI keeps the script working); its figures mean nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../src/config';
import { silentLogger } from '../src/log';
import { startService as startServiceHere } from '../src/service';
import { INSIGHT_QUESTIONS } from './lib/insight-questions';
import { bulkWorkspace } from './lib/bulk-workspace';
import { KEYS, ROOT } from './lib/processes';
import { median, ms, percentile, timeInTurn } from './lib/stats';

const smoke = process.argv.includes('--smoke');
const EVENTS = smoke ? 20_000 : 10_000_000;
const ITERATIONS = smoke ? 2 : 10;
const DATABASE = 'bench_insights';

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-insights-'));
const started = Date.now();
const rows: string[] = [];
/** Lines printed under the table. */
const notes: string[] = [];
try {
  const dataDir = join(workDir, 'data');
  console.error(`generating ${EVENTS.toLocaleString('en-US')} events in ${workDir}`);
  const { key } = await bulkWorkspace(dataDir, DATABASE, EVENTS, 'persons');

  const config = buildConfig(readEnvFile(join(ROOT, '.env.defaults')), { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', PUBLIC_API_KEYS: KEYS.public, PRIVATE_API_KEYS: KEYS.private });
  const svc = await startServiceHere(config, silentLogger);
  const sandbox = svc.storage.openSandbox({ timeoutMs: config.queryTimeoutMs, maxResultRows: config.queryMaxResultRows, maxResultBytes: config.queryMaxResultBytes, maxMemoryBytes: config.queryMaxMemoryBytes });
  try {
    for (const question of INSIGHT_QUESTIONS) {
      const ask = async () => {
        const res = await fetch(`${svc.url}/insights/${question.kind}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(question.body) });
        const text = await res.text();
        if (!res.ok) throw new Error(`${question.name}: ${res.status}: ${text.slice(0, 500)}`);
      };
      const tuned = () => sandbox.run(DATABASE, question.sql);
      const looser = question.looser ? [() => sandbox.run(DATABASE, question.looser!.sql)] : [];
      const [service, alone, loose] = (await timeInTurn([ask, tuned, ...looser], ITERATIONS)) as [number[], number[], number[] | undefined];
      if (loose) notes.push(`${question.name}: the tuned SQL without ${question.looser!.without}: ${ms(median(loose))} (p95 ${ms(percentile(loose, 0.95))}).`);
      const [s, a] = [median(service), median(alone)];
      const bound = 1.25 * a + 5;
      rows.push(`| ${question.name} | ${ms(s)} (p95 ${ms(percentile(service, 0.95))}) | ${ms(a)} (p95 ${ms(percentile(alone, 0.95))}) | ${(s / a).toFixed(2)}× | ≤ ${ms(bound)} ${s <= bound ? '✓' : '✗'}${question.aim ? `; aim < ${ms(question.aim)} ${s < question.aim ? '✓' : '✗'}` : ''} |`);
      console.error(`  ${question.name}: service ${ms(s)}, tuned SQL ${ms(a)}`);
    }
  } finally {
    await sandbox.close();
    await svc.stop();
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const cpu = cpus();
console.log(`Insights benchmark of ${new Date().toISOString().slice(0, 10)} on ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; ${EVENTS.toLocaleString('en-US')} events of 100,000 persons over 90 days; median of ${ITERATIONS} rounds; ${Math.round((Date.now() - started) / 1000)} s${smoke ? '; SMOKE RUN, figures meaningless' : ''}\n`);
console.log('| Question | Service (POST /insights/…) | Tuned SQL, engine alone | Ratio | Target: 1.25× + 5 ms |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
if (notes.length > 0) console.log(`\n${notes.map((note) => `- ${note}`).join('\n')}`);
