/**
 * What leaving automated clients out costs (src/events/bots.ts): `count()` and `uniq` of page
 * views over `rows` events of the service's schema, each with a context of a browser's size
 * (page, user agent, browser, OS, device, location, campaign; one in twenty marked `bot`), with
 * no condition, with the condition read from the context's JSON text, and with the same read
 * stored as a MATERIALIZED column (as the fast-reads layer stores a read statements make), and
 * the whole visit-events condition (src/web-analytics/stats/sessions.ts). Best of 5.
 * Usage: bun bench/bot-filter.ts <empty dataDir> [rows=2000000]
 */
import { Session } from 'chdb';
import { HUMAN_EVENTS } from '../src/events/bots';
import { plainTarget } from '../src/storage/migrations/runner';
import { workspaceMigrations } from '../src/storage/migrations/workspace';
import { VISIT_EVENTS } from '../src/web-analytics/stats/sessions';

const [dataDir, rowsArg] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: bun bench/bot-filter.ts <empty dataDir> [rows]');
const rows = Number(rowsArg ?? 2_000_000);
const RUNS = 5;

const session = new Session(dataDir);
session.query('CREATE DATABASE IF NOT EXISTS bots');
for (const m of workspaceMigrations) for (const sql of m.statements(plainTarget('bots'))) session.query(sql);
session.query(
  `INSERT INTO bots.events (uuid, type, event, anonymousId, context, timestamp, parsedAt)
   SELECT generateUUIDv4(), if(number % 3 = 0, 'track', 'page'), if(number % 3 = 0, 'Signup', ''), concat('a-', toString(number % 50000)),
     concat('{"page":{"path":"/p', toString(number % 40), '","url":"https://example.com/p', toString(number % 40), '","referrer":"https://www.google.com/"},',
       '"userAgent":"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",',
       '"browser":{"name":"Chrome","version":"131.0.0.0"},"os":{"name":"Windows","version":"10"},"device":{"type":"desktop"},',
       '"location":{"country":"DE"},"campaign":{"source":"news"},"source":"Google"', if(number % 20 = 0, ',"bot":true', ''), '}'),
     now64(6) - toIntervalSecond(number % 2592000), now64(6)
   FROM numbers(${rows})`,
);
session.query('OPTIMIZE TABLE bots.events FINAL');

const best = (sql: string): number => {
  session.query(sql);
  let fastest = Infinity;
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    session.query(sql);
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
};
const report = (name: string, where: string) =>
  console.log(`${name.padEnd(44)} count ${best(`SELECT count() FROM bots.events WHERE type = 'page' AND ${where}`).toFixed(0).padStart(5)} ms, uniq ${best(`SELECT uniq(anonymousId) FROM bots.events WHERE type = 'page' AND ${where}`).toFixed(0).padStart(5)} ms`);

console.log(`${rows} events (${session.query("SELECT formatReadableSize(sum(data_compressed_bytes)) FROM system.parts WHERE database = 'bots' AND active", 'TSV').trim()} on disk)`);
report('no condition', '1');
report('context JSON: ' + HUMAN_EVENTS, HUMAN_EVENTS);
report('visit events (the stored visitEvent column)', VISIT_EVENTS);
session.query(`ALTER TABLE bots.events ADD COLUMN bot Bool MATERIALIZED JSONExtractBool(context, 'bot')`);
session.query('ALTER TABLE bots.events MATERIALIZE COLUMN bot SETTINGS mutations_sync = 1');
report('stored column: NOT bot', 'NOT bot');
session.close();
