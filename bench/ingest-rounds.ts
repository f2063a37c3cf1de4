/**
 * `bun bench/ingest-rounds.ts '<variants>' [connections] [rounds] [seconds] [events]`: services
 * of different settings or commits (and the bare Bun server) under the same `POST /events` load,
 * each started fresh and run in turn, round after round, printing requests/s, latency and the CPU
 * time of the service's process per request. On a shared machine the requests/s of rounds spread
 * widely; the CPU per request is what compares.
 *
 * Variants (JSON): `{"name": {"env": {...}, "ref": "<git ref>"}}`, or `{"name": {"bare": true}}`;
 * e.g. `'{"before": {"ref": "2befe36"}, "after": {}, "no gate": {"env": {"HTTP_CONNECTION_GATE": "false"}}}' 64,512 3 5 1`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventsBody } from './lib/event-mix';
import { maxRate } from './lib/load';
import { commitOf, freePort, KEYS, ROOT, startBareServer, startService, worktreeOf } from './lib/processes';
import { median, ms, rate } from './lib/stats';

interface Variant {
  env?: Record<string, string>;
  ref?: string;
  bare?: boolean;
}

const [variantsJson, connectionsArg = '64,512', roundsArg = '3', secondsArg = '5', eventsArg = '1'] = process.argv.slice(2);
if (!variantsJson) throw new Error("usage: bun bench/ingest-rounds.ts '<variants JSON>' [connections] [rounds] [seconds] [events]");
const variants = Object.entries(JSON.parse(variantsJson) as Record<string, Variant>);
const connectionCounts = connectionsArg.split(',').map(Number);
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);
const events = Number(eventsArg);

/** CPU seconds (user and system) the process `pid` has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const work = mkdtempSync(join(tmpdir(), 'ingest-rounds-'));
const trees: Array<{ remove(): void }> = [];
const roots = new Map<string, string>();
try {
  for (const [name, variant] of variants) {
    if (!variant.ref) continue;
    const dir = join(work, `tree-${roots.size}`);
    trees.push(worktreeOf(commitOf(variant.ref), dir));
    roots.set(name, dir);
  }
  const request = (url: string) => ({ url: `${url}/events`, body: eventsBody(events), headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.public}` } });
  const results = new Map<string, { perSecond: number[]; cpu: number[] }>();
  let runs = 0;
  for (const connections of connectionCounts) {
    for (let round = 1; round <= rounds; round++) {
      for (const [name, variant] of variants) {
        const port = await freePort();
        const svc = variant.bare ? await startBareServer(port) : await startService(join(work, `data-${runs++}`), port, variant.env ?? {}, roots.get(name) ?? ROOT);
        try {
          await maxRate(request(svc.url), connections, 1);
          const cpuBefore = cpuSeconds(svc.proc.pid);
          const load = await maxRate(request(svc.url), connections, seconds);
          const cpuPerRequest = ((cpuSeconds(svc.proc.pid) - cpuBefore) / (load.okPerSecond * seconds)) * 1e6;
          const key = `${name}, ${connections} connections`;
          const entry = results.get(key) ?? { perSecond: [], cpu: [] };
          entry.perSecond.push(load.okPerSecond * events);
          entry.cpu.push(cpuPerRequest);
          results.set(key, entry);
          console.log(`${key}, round ${round}: ${rate(load.okPerSecond * events)} events, p50 ${ms(load.p50Ms)}, p99 ${ms(load.p99Ms)}, ${load.failures} failed, ${cpuPerRequest.toFixed(0)} µs of CPU a request`);
        } finally {
          await svc.stop();
        }
      }
    }
  }
  console.log(`\nmedians of ${rounds} rounds of ${seconds} s, ${events} event(s) a request:`);
  for (const [key, { perSecond, cpu }] of results) console.log(`${key}: ${rate(median(perSecond))} events, ${median(cpu).toFixed(0)} µs of CPU a request`);
} finally {
  for (const tree of trees) tree.remove();
  rmSync(work, { recursive: true, force: true });
}
