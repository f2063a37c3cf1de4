/**
 * The cost of naming sources as Plausible does (docs/architecture.md#web-analytics-sources): the
 * enrichment's naming of one event at collection (in TypeScript), and the merge of stored
 * spellings when visits are made (the SQL of `sourceNameSql`), timed on the engine alone over
 * `rows` stored sources against reading them as they are.
 * Usage: bun bench/source-names.ts <empty dataDir> [rows=2000000]
 */
import { Session } from 'chdb';
import { referrerName, sourceName, sourceNameSql } from '../src/web-analytics/sources/source-names';
import { httpUrl, trafficSource } from '../src/web-analytics/traffic-source';

const [dataDir, rowsArg] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: bun bench/source-names.ts <empty dataDir> [rows]');
const rows = Number(rowsArg ?? 2_000_000);
const RUNS = 7;

// Collection: a landing page with a referrer (most events have none, or one within the site).
const referrers = ['https://t.co/abc', 'https://www.google.de/', 'https://news.ycombinator.com/item?id=1', 'https://blog.unknown.example/post', 'https://shop.example/a'];
const calls = 200_000;
let started = performance.now();
for (let i = 0; i < calls; i++) trafficSource(httpUrl('https://shop.example/p?utm_medium=x'), httpUrl(referrers[i % referrers.length]), i % 7 === 0 ? 'twitter' : undefined);
console.log(`collection: ${(((performance.now() - started) / calls) * 1000).toFixed(2)} µs to name one event's source (URLs parsed included)`);
const hosts = referrers.map((r) => new URL(r).hostname);
started = performance.now();
for (let i = 0; i < calls; i++) sourceName(referrerName(hosts[i % hosts.length]!, '/item'));
console.log(`collection: ${(((performance.now() - started) / calls) * 1000).toFixed(2)} µs of it the look-ups (referrer database and merge)`);

// Reading: the stored `context.source` of `rows` events, as stored before the naming (mixed spellings).
const session = new Session(dataDir);
session.query('CREATE DATABASE IF NOT EXISTS names');
session.query('CREATE TABLE IF NOT EXISTS names.events (context String) ENGINE = MergeTree ORDER BY tuple()');
session.query(
  `INSERT INTO names.events SELECT concat('{"source":"', ['twitter', 'Twitter', 'google', 'Google', 'newsletter', '', 'blog.unknown.example', 'IG'][number % 8 + 1], '"}')
   FROM numbers(${rows})`,
);
session.query('OPTIMIZE TABLE names.events FINAL');
// Best of RUNS each, taken in turns: the machine is shared and noisy.
const statement = (expression: string) => `SELECT ${expression} AS s, count() FROM names.events GROUP BY s FORMAT Null`;
const plainSql = statement(`JSONExtractString(context, 'source')`);
const namedSql = statement(sourceNameSql(`JSONExtractString(context, 'source')`));
const best = { plain: Infinity, named: Infinity };
for (let run = 0; run < RUNS; run++) {
  for (const [name, sql] of [['plain', plainSql], ['named', namedSql]] as const) {
    const begun = performance.now();
    session.query(sql);
    best[name] = Math.min(best[name], performance.now() - begun);
  }
}
console.log(`reading ${rows} stored sources grouped, best of ${RUNS}: ${best.plain.toFixed(1)} ms as stored, ${best.named.toFixed(1)} ms merged (${(best.named / best.plain).toFixed(2)}×); the expression is ${sourceNameSql('x').length} characters`);
session.close();
