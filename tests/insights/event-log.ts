import { seededRandom } from '../helpers/seeded-random';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { uniqueName } from '../helpers/engine-dir';

/**
 * Seeded random event logs for the insights' differential tests, and the plain computation of
 * who each event belongs to and each person's first touch (docs/api/persons.md): persons who
 * browse anonymously and then sign in (on one or two devices), persons never identified, persons
 * signed in from the start; two shared browsers; referrers; groups; ties in timestamps; events
 * around the daylight-saving changes of Europe/Paris and at local midnights; crawlers, whose
 * events insights leave out.
 */

export interface LogEvent {
  type: 'page' | 'track' | 'identify' | 'group';
  event?: string;
  userId?: string;
  anonymousId?: string;
  groupId?: string;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  /** Set on a crawler's events only (`{ bot: true }`, as the enrichment marks them). */
  context?: Record<string, unknown>;
  timestamp: string;
}

/** An event of the log with what the reference computations need, in sending order. */
export interface Sent extends LogEvent {
  /** ms since the epoch. */
  at: number;
  /** Its place in the sending order: the tie-breaker after the timestamp. */
  index: number;
  /** Its person by the identity rules, once every link of the log is known. */
  personId: string;
}

export const EVENT_NAMES = ['pageview_pricing', 'signup', 'purchase', 'invite', 'upgrade'] as const;
export const PLANS = ['free', 'pro', 'team', 'enterprise'] as const;
export const PATHS = ['/', '/pricing', '/docs', '/blog', '/signup'] as const;
/** Referrers of page views, in turn (none for two of five): what first touch reads. */
const REFERRERS = ['https://www.google.com/search?q=x', '', 'https://t.co/abc', 'https://news.ycombinator.com/item?id=42', ''] as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface LogOptions {
  seed: number;
  /** The first and last instant events may have, ms. */
  from: number;
  to: number;
  persons: number;
}

/**
 * A log of about `persons` × 10 events between `from` and `to`. Each person's events are a few
 * sessions; a tenth of the events share their timestamp with the one before (ties); some land
 * exactly on a local midnight or hour of Europe/Paris.
 */
export function randomLog({ seed, from, to, persons }: LogOptions): Sent[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const span = to - from;
  const events: LogEvent[] = [];
  const sharedBrowser = 'anon-shared';
  for (let p = 0; p < persons; p++) {
    const userId = `user-${p}`;
    const devices = [`anon-${p}-a`, ...(random() < 0.3 ? [`anon-${p}-b`] : [])];
    const kind = random();
    const identifiesAt = kind < 0.5 ? random() : kind < 0.8 ? 0 : Infinity;
    const groupId = random() < 0.6 ? `group-${Math.floor(random() * Math.max(2, persons / 5))}` : undefined;
    const plan = pick(PLANS);
    const sessions = 1 + Math.floor(random() * 5);
    for (let s = 0; s < sessions; s++) {
      let t = from + Math.floor(random() * span);
      // Some sessions start on the hour, at local midnight or near the clock changes.
      if (random() < 0.1) t = Math.floor(t / HOUR) * HOUR;
      // Shared browsers: a few persons' first sessions on one, others' last sessions on another.
      const device = p % 17 === 0 && s === 0 ? sharedBrowser : p % 13 === 5 && s === sessions - 1 ? `${sharedBrowser}-2` : pick(devices);
      const signedIn = (t - from) / span >= identifiesAt;
      for (let k = 1 + Math.floor(random() * 4); k > 0 && t <= to; k--) {
        const ids = signedIn ? { userId, anonymousId: random() < 0.8 ? device : undefined } : { anonymousId: device };
        const r = random();
        const referrer = REFERRERS[events.length % REFERRERS.length];
        if (r < 0.35) events.push({ type: 'page', ...ids, properties: { path: pick(PATHS), ...(referrer ? { referrer } : {}) }, timestamp: '' });
        else events.push({ type: 'track', event: pick(EVENT_NAMES), ...ids, ...(groupId ? { groupId } : {}), properties: { plan, amount: Math.floor(random() * 100) }, timestamp: '' });
        events[events.length - 1]!.timestamp = new Date(t).toISOString();
        if (random() > 0.1) t += Math.floor(random() * 3 * HOUR);
      }
      if (signedIn && s === 0 && identifiesAt > 0 && identifiesAt < 1) {
        events.push({ type: 'identify', userId, anonymousId: device, traits: { plan, email: `${userId}@example.com` }, timestamp: new Date(Math.min(t, to)).toISOString() });
      }
    }
    if (groupId && random() < 0.5) events.push({ type: 'group', userId, groupId, traits: { name: groupId, size: Math.floor(random() * 50) }, timestamp: new Date(from + Math.floor(random() * span)).toISOString() });
  }
  // Sent in time order, as live traffic arrives (equal times keep their order): a person's
  // anonymous events go before the identify that links them, which then applies to the past.
  // Every thirteenth person is a crawler: the enrichment marks its events `context.bot`.
  for (const e of events) if (isCrawler(e)) e.context = { bot: true };
  return resolvePersons(events.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp)));
}

/** Whether `e` is of a crawler of randomLog: a person numbered 12 modulo 13 (not on the shared browser). */
function isCrawler(e: LogEvent): boolean {
  const n = /^(?:user|anon)-(\d+)/.exec(e.userId || e.anonymousId || '');
  return n !== null && Number(n[1]) % 13 === 12;
}

/** Whether `e` is an automated client's, which insights leave out unless `includeBots`. */
export const isBot = (e: LogEvent) => e.context?.bot === true;

/**
 * Each event's person: its userId, else the userId its anonymousId was first linked to (the
 * earliest event carrying both, by time, then sending order: a shared browser stays with its first
 * user), else its anonymousId.
 */
export function resolvePersons(events: readonly LogEvent[]): Sent[] {
  const sent = events.map((e, index) => ({ ...e, at: Date.parse(e.timestamp), index, personId: '' }));
  const links = new Map<string, { userId: string; at: number; index: number }>();
  for (const e of sent) {
    if (!e.userId || !e.anonymousId || e.anonymousId === e.userId) continue;
    const known = links.get(e.anonymousId);
    if (!known || e.at < known.at || (e.at === known.at && e.index < known.index)) links.set(e.anonymousId, { userId: e.userId, at: e.at, index: e.index });
  }
  for (const e of sent) e.personId = e.userId || links.get(e.anonymousId!)?.userId || e.anonymousId!;
  return sent;
}

/**
 * Each person's first touch (docs/api/persons.md#first-touch): from their first event (time, then
 * sending order), its page's path and referrer, and the referrer's host ('' where it had none).
 */
export function firstTouch(events: readonly Sent[]): Map<string, { $initial_pathname: string; $initial_referrer: string; $initial_referring_domain: string }> {
  const first = new Map<string, Sent>();
  for (const e of events) {
    const known = first.get(e.personId);
    if (!known || e.at < known.at || (e.at === known.at && e.index < known.index)) first.set(e.personId, e);
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return new Map(
    [...first].map(([personId, e]) => {
      const referrer = text(e.properties?.referrer);
      return [personId, { $initial_pathname: text(e.properties?.path), $initial_referrer: referrer, $initial_referring_domain: referrer ? new URL(referrer).hostname : '' }];
    }),
  );
}

/** Whether `e` is what an insight's `event` names: `$any` every event, `$pageview` page events, else the event's name; a crawler's only with `includeBots`. */
export const matches = (e: LogEvent, event: string, includeBots = false) => (includeBots || !isBot(e)) && (event === '$any' || (event === '$pageview' ? e.type === 'page' : (e.event ?? '') === event));

/**
 * A service with a workspace holding `events`; `insight` posts a query with its private key,
 * `actors` asks for the persons behind one of its points (POST /insights/<kind>/persons).
 */
export async function serviceWith(events: readonly LogEvent[]) {
  const svc: TestService = await startTestService();
  const workspace = await createWorkspace(svc, { name: uniqueName('insights') });
  for (let i = 0; i < events.length; i += 2000) {
    await sendEvents(svc, events.slice(i, i + 2000).map(({ at, index, personId, ...e }: Partial<Sent> & LogEvent) => e), workspace.publicApiKey);
  }
  const insight = async (kind: string, body: unknown, query = '') => {
    const res = await svc.request('POST', `/insights/${kind}${query}`, { key: workspace.privateApiKey, body });
    return { status: res.status, body: (await res.json()) as any };
  };
  const actors = async (kind: string, body: unknown) => {
    const res = await svc.request('POST', `/insights/${kind}/persons`, { key: workspace.privateApiKey, body });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { svc, workspace, insight, actors };
}

export { DAY, HOUR };
