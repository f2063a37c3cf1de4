/**
 * `bun bench/tracking-plan.ts [--rounds n] [--seconds s]`: what enforcing a tracking plan costs at
 * collection (issue 42's target: batched ingest with a plan of 50 events keeps 0.95 of its rate
 * without one, single events 0.9). One service (`npm start`'s settings) takes the benchmark's mix
 * through `POST /events`, batched (100 events a request, 64 connections) and single (1 event, 64
 * connections), in rounds of two runs, in turn first and second: no plan (an empty one: the ingest
 * path's single look-up), and a plan of 50 track events (the mix's 20 names and 30 more; each a required `plan` enum, a
 * `number` amount, a `path` pattern, nothing else allowed) and schemas of identify and group traits,
 * in record mode. Every event of the mix keeps the plan, so both store the same. The machine is
 * noisy: the rounds' rates and the median of their ratios are printed (Markdown), with requests
 * refused and the service process's CPU time per event (steadier than rates on a shared machine:
 * the rate its CPU allows), and first, in this process, the time the plan's check takes per event of the mix (steady
 * where the rates are not).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptEvent } from '../src/events/event-rows';
import type { EventInput } from '../src/events/model';
import { PlanValidator } from '../src/tracking-plans/plan-validator';
import { eventsBody, mixEvent } from './lib/event-mix';
import { maxRate } from './lib/load';
import { exitOnSignal, freePort, KEYS, startService } from './lib/processes';
import { median, rate } from './lib/stats';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => (args.indexOf(name) >= 0 ? Number(args[args.indexOf(name) + 1]) : fallback);
const ROUNDS = flag('--rounds', 3);
const SECONDS = flag('--seconds', 5);
const CONNECTIONS = 64;

const TRACK_NAMES = ['signup', 'login', 'logout', 'purchase', 'add_to_cart', 'remove_from_cart', 'view_item', 'search', 'share', 'invite',
  'upgrade', 'downgrade', 'export', 'import', 'comment', 'like', 'follow', 'unfollow', 'play', 'pause'];
const eventSchema = {
  type: 'object',
  properties: { plan: { type: 'string', enum: ['free', 'pro', 'team', 'enterprise'] }, amount: { type: 'number' }, path: { type: 'string', pattern: '^/items/' } },
  required: ['plan'],
  additionalProperties: false,
};
const PLAN_OF_50 = {
  events: Object.fromEntries([...TRACK_NAMES, ...Array.from({ length: 30 }, (_, i) => `planned_${i}`)].map((name) => [name, eventSchema])),
  identify: { type: 'object', properties: { email: { type: 'string', pattern: '@' }, plan: { type: 'string' }, age: { type: 'integer' } }, required: ['email'] },
  group: { type: 'object', properties: { name: { type: 'string' }, seats: { type: 'integer' } } },
};

const workDir = mkdtempSync(join(tmpdir(), 'analytics-bench-tracking-plan-'));
process.on('exit', () => rmSync(workDir, { recursive: true, force: true })).on('SIGINT', exitOnSignal).on('SIGTERM', exitOnSignal);
const say = (line: string) => console.log(line);

/** CPU seconds (user and system) the process `pid` has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function setPlan(url: string, plan: unknown): Promise<void> {
  const res = await fetch(`${url}/tracking-plan`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.private}` },
    body: JSON.stringify({ format: 'native', plan, mode: 'record' }),
  });
  if (res.status !== 200) throw new Error(`PUT /tracking-plan answered ${res.status}: ${await res.text()}`);
}

/** Violations counted: none expected, since the mix keeps the plan. */
async function violations(url: string): Promise<number> {
  const res = await fetch(`${url}/violations`, { headers: { authorization: `Bearer ${KEYS.private}` } });
  return ((await res.json()) as { results: Array<{ count: number }> }).results.reduce((n, v) => n + v.count, 0);
}

say(`# Tracking plan at collection, ${new Date().toISOString()}, ${cpus().length} cores, ${ROUNDS} rounds of ${SECONDS} s\n`);

// The check alone: the plan compiled once, each event of the mix checked as the ingest path does.
const validator = new PlanValidator(PLAN_OF_50);
const accepted = Array.from({ length: 100_000 }, (_, i) => acceptEvent(mixEvent(i) as EventInput, BigInt(Date.now()) * 1000n, 'bench'));
let broken = 0;
const passes: number[] = [];
for (let pass = 0; pass < 6; pass++) {
  const started = performance.now();
  for (const a of accepted) broken += validator.check(a.event).length;
  // The first pass warms the compiled checks up (JIT): left out.
  if (pass > 0) passes.push(((performance.now() - started) * 1e6) / accepted.length);
}
say(`The plan's check: ${median(passes).toFixed(0)} ns per event of the mix, median of 5 passes over 100,000 (${broken} violations)\n`);
const svc = await startService(join(workDir, 'data'), await freePort());
try {
  for (const [label, batch] of [['batched (100 events a request)', 100], ['single events', 1]] as const) {
    const request = { url: `${svc.url}/events`, body: eventsBody(batch), headers: { 'content-type': 'application/json', authorization: `Bearer ${KEYS.public}` } };
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    say(`## ${label}\n\n| round | events/s without a plan | events/s with 50 events planned | ratio | service CPU per event, without / with | ratio |\n|---|---|---|---|---|---|`);
    for (let round = 1; round <= ROUNDS; round++) {
      // Each round runs the two in the other order: the engine slows as data and merges pile up,
      // which would count against whichever always ran second.
      const measure = async (plan: unknown) => {
        await setPlan(svc.url, plan);
        await maxRate(request, CONNECTIONS, 1);
        const cpu = cpuSeconds(svc.proc.pid);
        const load = await maxRate(request, CONNECTIONS, SECONDS);
        const events = load.okPerSecond * batch * SECONDS;
        return { perSecond: load.okPerSecond * batch, refused: load.failures, cpuMicros: ((cpuSeconds(svc.proc.pid) - cpu) * 1e6) / events };
      };
      const first = await measure(round % 2 === 1 ? { events: {} } : PLAN_OF_50);
      const second = await measure(round % 2 === 1 ? PLAN_OF_50 : { events: {} });
      const [without, planned] = round % 2 === 1 ? [first, second] : [second, first];
      ratios.push(planned.perSecond / without.perSecond);
      cpuRatios.push(without.cpuMicros / planned.cpuMicros);
      say(
        `| ${round} | ${rate(without.perSecond)} (${without.refused} refused) | ${rate(planned.perSecond)} (${planned.refused} refused) | ${(planned.perSecond / without.perSecond).toFixed(3)} ` +
          `| ${without.cpuMicros.toFixed(1)} µs / ${planned.cpuMicros.toFixed(1)} µs | ${(without.cpuMicros / planned.cpuMicros).toFixed(3)} |`,
      );
    }
    say(`\nMedian ratios: events/s **${median(ratios).toFixed(3)}**, CPU per event (without / with: the rate the CPU allows) **${median(cpuRatios).toFixed(3)}**\n`);
  }
  say(`Violations counted (the mix keeps the plan, so 0): ${await violations(svc.url)}`);
} finally {
  await svc.stop();
}
