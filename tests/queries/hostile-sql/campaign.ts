/**
 * One fuzzing run: `count` statements of the hostile grammar, seeded, sent through the five doors
 * with the attacker's key, every answer (status, headers, body) searched for the target's
 * canaries. What comes out: the outcomes by door and status, the refusals by reason, and the
 * findings: breaches (a canary came back) and faults (a 5xx; a 500 is a bug).
 */
import { DashboardDoor, throughDoor, type Answer } from './doors';
import { hostileStatement, type DoorName, type HostileStatement } from './grammar';
import { canariesIn, type Target } from './target';

export interface Finding {
  seed: number;
  index: number;
  door: DoorName;
  statement: HostileStatement;
  status: number;
  /** What came back that should not have: the canaries' descriptions, or the fault's answer. */
  what: string[];
  excerpt: string;
}

export interface CampaignReport {
  seed: number;
  count: number;
  seconds: number;
  /** `door status` → statements. */
  outcomes: Map<string, number>;
  /** Benign statements by door: sent, and answered 200. */
  benign: Map<DoorName, { sent: number; ran: number }>;
  /** Why statements were refused (403), their names and numbers blanked: reason → statements. */
  refusals: Map<string, number>;
  breaches: Finding[];
  faults: Finding[];
}

/** Which door statement `index` goes through: most through POST /queries, a share through each other. */
const DOOR_PATTERN: readonly DoorName[] = (
  [
    ['queries', 68],
    ['export', 8],
    ['clickhouse-get', 8],
    ['clickhouse-post', 8],
    ['dashboard', 8],
  ] as const
).flatMap(([door, n]) => Array<DoorName>(n).fill(door));

export const doorOf = (index: number): DoorName => DOOR_PATTERN[(index * 37) % DOOR_PATTERN.length]!;

/** Statements of the single-statement doors in flight at once, and exports among them (the service allows 2 a workspace). */
const IN_FLIGHT = 6;
const EXPORTS_IN_FLIGHT = 2;

/** A reason with its particulars blanked, so that refusals group by rule. */
const reasonShape = (reason: string) =>
  reason
    .replace(/\.? \([A-Z_]+\)\s*$/, '')
    .replace(/^\S+ is outside this workspace/, '… is outside this workspace')
    .replace(/`[^`]*`|'[^']*'|"[^"]*"/g, '…')
    .replace(/\b\w*(?:\d|_)\w*\b/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 100);

/**
 * A 5xx is a fault, except ClickHouse's NOT_IMPLEMENTED (code 48) on /clickhouse, which it answers
 * with 501 as ClickHouse does (docs/api/clickhouse.md).
 */
const isFault = (door: DoorName, answer: Answer) => answer.status >= 500 && !(door.startsWith('clickhouse') && answer.status === 501 && answer.clickhouseCode === 48);

export async function runCampaign(target: Target, seed: number, count: number, onProgress?: (done: number) => void): Promise<CampaignReport> {
  const started = performance.now();
  const report: CampaignReport = { seed, count, seconds: 0, outcomes: new Map(), benign: new Map(), refusals: new Map(), breaches: [], faults: [] };
  let done = 0;

  const record = (index: number, door: DoorName, statement: HostileStatement, answer: Answer) => {
    const key = `${door} ${answer.status}`;
    report.outcomes.set(key, (report.outcomes.get(key) ?? 0) + 1);
    if (statement.benign) {
      const tally = report.benign.get(door) ?? { sent: 0, ran: 0 };
      tally.sent++;
      if (answer.status === 200) tally.ran++;
      report.benign.set(door, tally);
    }
    if (answer.status === 403 && answer.reason) report.refusals.set(reasonShape(answer.reason), (report.refusals.get(reasonShape(answer.reason)) ?? 0) + 1);
    const spelled = statement.sql + JSON.stringify(statement.params) + JSON.stringify(statement.settings) + (statement.knowsDataDir ? target.terrain.dataDir : '');
    const found = canariesIn(answer.text, target.canaries, spelled);
    const finding = { seed, index, door, statement, status: answer.status, excerpt: answer.text.slice(0, 600) };
    if (found.length > 0) report.breaches.push({ ...finding, what: found });
    if (isFault(door, answer)) report.faults.push({ ...finding, what: [answer.reason ?? ''] });
    if (++done % 500 === 0) onProgress?.(done);
  };

  const single: number[] = [];
  const dashboard: number[] = [];
  for (let index = 0; index < count; index++) (doorOf(index) === 'dashboard' ? dashboard : single).push(index);

  let exports = 0;
  const exportWaiters: Array<() => void> = [];
  const singleLane = async () => {
    for (let index = single.shift(); index !== undefined; index = single.shift()) {
      const door = doorOf(index) as Exclude<DoorName, 'dashboard'>;
      const statement = hostileStatement(seed, index, door, target.terrain);
      if (door === 'export') {
        while (exports >= EXPORTS_IN_FLIGHT) await new Promise<void>((resolve) => exportWaiters.push(resolve));
        exports++;
      }
      try {
        record(index, door, statement, await throughDoor(door, target.url, target.attackerKey, statement));
      } finally {
        if (door === 'export') (exports--, exportWaiters.shift()?.());
      }
    }
  };
  const dashboardLane = async () => {
    const door = new DashboardDoor(target.url, target.attackerKey);
    while (dashboard.length > 0) {
      const batch = dashboard.splice(0, door.tiles).map((index) => ({ index, statement: hostileStatement(seed, index, 'dashboard', target.terrain) }));
      const answers = await door.answer(batch.map(({ statement }) => statement));
      for (const [i, { index, statement }] of batch.entries()) record(index, 'dashboard', statement, answers[i]!);
    }
  };
  await Promise.all([...Array.from({ length: IN_FLIGHT }, singleLane), dashboardLane()]);
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** A finding as a line to print: enough to reproduce it (seed, index, door) and to read it. */
export function describeFinding(finding: Finding): string {
  const { seed, index, door, statement, status, what, excerpt } = finding;
  const extras = { ...statement.params, ...statement.settings };
  return [
    `seed ${seed} index ${index} via ${door}: ${status}, ${what.join(', ')}`,
    `  statement: ${statement.sql}${Object.keys(extras).length > 0 ? `  (URL parameters ${JSON.stringify(extras)})` : ''}`,
    `  productions: ${statement.productions.join(' ')}`,
    `  answer: ${excerpt.replace(/\s+/g, ' ').slice(0, 300)}`,
  ].join('\n');
}

/** Breaches by the productions of their statements, and by the canaries that came back: name → breaches. */
export function breachTally(report: CampaignReport): { productions: Map<string, number>; canaries: Map<string, number> } {
  const productions = new Map<string, number>();
  const canaries = new Map<string, number>();
  for (const breach of report.breaches) {
    for (const name of new Set(breach.statement.productions)) productions.set(name, (productions.get(name) ?? 0) + 1);
    for (const what of breach.what) canaries.set(what, (canaries.get(what) ?? 0) + 1);
  }
  return { productions, canaries };
}

/** The run's numbers, for the console. */
export function summarize(report: CampaignReport): string {
  const byStatus = new Map<string, number>();
  for (const [key, n] of report.outcomes) byStatus.set(key.split(' ')[1]!, (byStatus.get(key.split(' ')[1]!) ?? 0) + n);
  const benign = [...report.benign].map(([door, { sent, ran }]) => `${door} ${ran}/${sent}`).join(', ');
  return [
    `hostile SQL, seed ${report.seed}: ${report.count} statements in ${report.seconds.toFixed(1)} s (${Math.round(report.count / report.seconds)}/s)`,
    `  by status: ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`,
    `  by door and status: ${JSON.stringify(Object.fromEntries([...report.outcomes].sort()))}`,
    `  benign statements that ran (200), by door: ${benign}`,
    `  breaches: ${report.breaches.length}, faults (5xx): ${report.faults.length}`,
  ].join('\n');
}
