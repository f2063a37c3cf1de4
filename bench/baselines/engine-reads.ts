/**
 * Baseline: the engine alone running statements, as the service would, without HTTP, keys,
 * validation or JSON: each statement group (run together, as the service runs them) is timed
 * `iterations` times after a warm-up. Also measures bytes on disk per stored event.
 * Usage: bun bench/baselines/engine-reads.ts <dataDir> <spec.json>
 * The spec: { iterations, diskDatabase, cases: [{ name, database, statements: [{ sql, params }] }] }
 */
import { Session } from 'chdb';
import { median, percentile } from '../lib/stats';

interface Spec {
  iterations: number;
  diskDatabase: string;
  cases: Array<{ name: string; database: string; statements: Array<{ sql: string; params: Record<string, unknown> }> }>;
}

const [dataDir, specPath] = process.argv.slice(2) as [string, string];
const spec = (await Bun.file(specPath).json()) as Spec;
const sessions = [new Session(dataDir), new Session(dataDir)];

async function run(session: Session, database: string, sql: string, params: Record<string, unknown>): Promise<void> {
  await session.queryAsync(`USE ${database}`);
  if (Object.keys(params).length > 0) await session.queryBindAsync(sql, params, { format: 'JSONEachRow' });
  else await session.queryAsync(sql, { format: 'JSONEachRow' });
}

const results: Record<string, { p50: number; p95: number }> = {};
for (const c of spec.cases) {
  const times: number[] = [];
  for (let i = -2; i < spec.iterations; i++) {
    const t0 = performance.now();
    await Promise.all(c.statements.map((s, k) => run(sessions[k % sessions.length]!, c.database, s.sql, s.params)));
    if (i >= 0) times.push(performance.now() - t0);
  }
  results[c.name] = { p50: median(times), p95: percentile(times, 0.95) };
}
const disk = JSON.parse(
  (
    await sessions[0]!.queryBindAsync(
      "SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows FROM system.parts WHERE database = {db:String} AND table = 'events' AND active",
      { db: spec.diskDatabase },
      { format: 'JSONEachRow' },
    )
  ).text(),
) as { bytes: number; rows: number };
for (const s of sessions) s.close();
console.log(JSON.stringify({ results, bytesPerEvent: Number(disk.bytes) / Number(disk.rows) }));
