import { seededRandom } from '../helpers/seeded-random';
import { resolvePersons, type LogEvent, type Sent } from '../insights/event-log';
import { referrerName, sourceName } from '../../src/web-analytics/sources/source-names';

/**
 * Generated visits for the Stats API v2 tests, and a plain computation of Plausible's answers
 * over them: sessionize each person's events in TypeScript, then count. The reference follows the
 * definitions of docs/web-analytics.md (Stats API v2), not the service's SQL.
 */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export const PATHS = ['/', '/pricing', '/docs', '/docs/install', '/blog', '/blog/hello', '/user/42', '/Login'] as const;
export const GOALS = ['Signup', 'Download', 'Outbound Link: Click'] as const;
const COUNTRIES = ['DE', 'FR', 'US', 'EE', 'PL', ''] as const;
const BROWSERS = ['Chrome', 'Firefox', 'Safari', ''] as const;
const OSES = ['Mac', 'Windows', 'GNU/Linux', 'iOS', 'Android'] as const;
const DEVICES = ['desktop', 'mobile', 'tablet', ''] as const;
/**
 * Where visits come from. With a `source`, the event carries it as sent (a client's, or one the
 * service stored before sources were named: `twitter` and `google` are spellings to merge);
 * without, the service names it from the landing page's `query` and the referrer.
 */
const SOURCES: ReadonlyArray<{ source?: string; referrer: string; query?: string; utm?: Record<string, string> }> = [
  { source: '', referrer: '' },
  { source: 'Google', referrer: 'https://www.google.com/' },
  { source: 'Twitter', referrer: 'https://t.co/abc' },
  { source: 'duckduckgo', referrer: '', utm: { source: 'duckduckgo', medium: 'cpc', name: 'Spring' } },
  { source: 'newsletter', referrer: '', utm: { source: 'newsletter', medium: 'email', name: 'Referral', content: 'banner', term: 'analytics' } },
  { source: 'twitter', referrer: '', utm: { source: 'twitter' } },
  { source: 'google', referrer: '', utm: { source: 'google', medium: 'cpc' } },
  { referrer: 'https://x.com/someone' },
  { referrer: 'https://news.ycombinator.com/item?id=42' },
  { referrer: 'https://www.reddit.com/r/analytics/#top' },
  { referrer: '', query: '?ref=producthunt' },
  { referrer: 'https://t.co/xyz', query: '?source=Newsletter' },
];

export interface Visit {
  /** The person of its first event: the visitor. */
  personId: string;
  /** Its events within the range asked. */
  events: Ev[];
  /** All its events, the range's or not. */
  all: Ev[];
  start: number;
  end: number;
}

export type VisitEvent = LogEvent & { context?: Record<string, unknown> };

/** Where a visit comes from and its enrichment, which its events share: a referrer, its landing page's query and a context. */
type VisitContext = { referrer: string; query: string; context: Record<string, unknown> };

export function randomVisitContext(random: () => number): VisitContext {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const where = pick(SOURCES);
  return {
    referrer: where.referrer,
    query: where.query ?? '',
    context: {
      location: { country: pick(COUNTRIES), region: 'R1' },
      browser: { name: pick(BROWSERS) },
      os: { name: pick(OSES) },
      device: { type: pick(DEVICES) },
      campaign: where.utm ?? {},
      source: where.source,
    },
  };
}

/**
 * The `k`th event of a visit, sent as `who` at `timestamp`: a page view (the first one mostly;
 * its path in `context.page`, or for some senders only in properties) or a goal, interactive or
 * not; a later event has a different browser now and then, which the visit must not take.
 */
export function visitEvent(random: () => number, visit: VisitContext, who: { userId?: string; anonymousId?: string }, k: number, timestamp: string): VisitEvent {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const path = pick(PATHS);
  const page = { path, url: `https://example.com${path}${k === 0 ? visit.query : ''}`, referrer: k === 0 ? visit.referrer : `https://example.com/` };
  const eventContext: Record<string, unknown> = { ...visit.context, page };
  if (k > 0 && random() < 0.15) eventContext.browser = { name: 'Edge' };
  const isPage = k === 0 ? random() < 0.9 : random() < 0.6;
  if (isPage) {
    // Segment SDKs and our tracker also put the path in properties; some senders only there.
    const onlyProperties = random() < 0.2;
    return { type: 'page', ...who, properties: onlyProperties ? { path, url: page.url, referrer: page.referrer } : { title: 'T' }, context: onlyProperties ? { ...eventContext, page: undefined } : eventContext, timestamp };
  }
  const interactive = random() < 0.8;
  return { type: 'track', event: pick(GOALS), ...who, properties: { plan: pick(['free', 'pro']) }, context: interactive ? eventContext : { ...eventContext, interactive: false }, timestamp };
}

/** The time to a visit's next event: whole seconds up to 20 minutes, sometimes exactly 30 minutes (a new visit), 29:59 or nothing (a tie). */
export function gapToNext(random: () => number): number {
  const r = random();
  return r < 0.05 ? 30 * MINUTE : r < 0.1 ? 30 * MINUTE - 1000 : r < 0.15 ? 0 : Math.floor((random() * 20 * MINUTE) / 1000) * 1000 + 1000;
}

/**
 * A log of visits between `from` and `to` (ms): about `visitors` × 2.5 visits of 1-6 events, each
 * visit's events sharing its enrichment (with a different browser now and then on a later event,
 * which the visit must not take), gaps between events of a visit from seconds to 29 minutes,
 * sometimes exactly 30 minutes (a new visit) or 29:59. Visitors are cookieless ids, signed-in
 * users, or anonymous ids later linked to a user; every tenth is a crawler (`context.bot`).
 */
export function visitLog(seed: number, from: number, to: number, visitors: number): Ev[] {
  const random = seededRandom(seed);
  const events: VisitEvent[] = [];
  for (let v = 0; v < visitors; v++) {
    const kind = random();
    const ids = kind < 0.6 ? { anonymousId: `cookieless-${v}` } : kind < 0.8 ? { userId: `user-${v}` } : { anonymousId: `anon-${v}` };
    const linksLater = kind >= 0.8;
    const visits = 1 + Math.floor(random() * 4);
    for (let s = 0; s < visits; s++) {
      let t = from + Math.floor(random() * (to - from));
      t = Math.floor(t / 1000) * 1000;
      const visit = randomVisitContext(random);
      const count = 1 + Math.floor(random() * 6);
      for (let k = 0; k < count && t <= to; k++) {
        const signedIn = linksLater && k === count - 1 && s === visits - 1;
        const who = signedIn ? { userId: `user-${v}`, anonymousId: `anon-${v}` } : ids;
        const event = visitEvent(random, visit, who, k, new Date(t).toISOString());
        events.push(v % 10 === 9 ? markedBot(event) : event);
        t += gapToNext(random);
      }
    }
  }
  return resolvePersons(events.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp))) as Ev[];
}

export interface Ev extends Sent {
  context?: Record<string, any>;
}

const pathOf = (e: Ev) => (e.context?.page?.path as string | undefined) || (e.properties?.path as string | undefined) || '';

/**
 * Whether an event makes visits (docs/web-analytics.md#visits): a page view or a track event (not
 * Plausible's engagement reports), not an automated client's (`context.bot`), sent from a browser:
 * with a page (its path or URL) or a browser's name. A backend's call has neither.
 */
export function makesVisits(e: Ev): boolean {
  if ((e.type !== 'page' && e.type !== 'track') || e.event === 'engagement' || e.context?.bot === true) return false;
  return Boolean(pathOf(e) || e.context?.page?.url || e.properties?.url || e.context?.browser?.name);
}

/** Every `n`th visitor of a generated log is a crawler: its events carry `context.bot`, as the enrichment marks them. */
export const markedBot = (event: VisitEvent): VisitEvent => ({ ...event, context: { ...event.context, bot: true } });

/**
 * The visits active within [from, to] (ending in or after it starts, starting before it ends:
 * Plausible's rule), whole: each device's (an event's anonymousId, else its userId) events that
 * make visits (makesVisits) cut where the gap reaches the timeout.
 */
export function sessionize(events: readonly Ev[], from: number, to: number, timeoutMinutes = 30): Visit[] {
  const byKey = new Map<string, Ev[]>();
  for (const e of events) {
    if (!makesVisits(e)) continue;
    const key = e.anonymousId || e.userId || '';
    byKey.set(key, [...(byKey.get(key) ?? []), e]);
  }
  const visits: Visit[] = [];
  for (const list of byKey.values()) {
    list.sort((a, b) => a.at - b.at || a.index - b.index);
    let current: Visit | undefined;
    for (const e of list) {
      if (!current || e.at - current.end >= timeoutMinutes * MINUTE) {
        current = { personId: e.personId, events: [], all: [], start: e.at, end: e.at };
        visits.push(current);
      }
      current.all.push(e);
      current.end = e.at;
    }
  }
  return visits
    .filter((v) => v.end >= from && v.start <= to)
    .map((v) => ({ ...v, events: v.all.filter((e) => e.at >= from && e.at <= to) }));
}

/**
 * A visit's source, from its first event, as docs/web-analytics.md#sources defines it: a source the
 * event carries, else its page's utm_source, `source` or `ref` parameter, else its referrer's name
 * (the referrer database's, or its host without www.; none within the site), in either case
 * merged with the known names in any case. The database and the merge are the service's data.
 */
function sourceOf(e: Ev): string {
  const c = e.context ?? {};
  if (typeof c.source === 'string') return sourceName(c.source);
  const page = URL.parse((c.page?.url ?? e.properties?.url ?? '') as string);
  const tagged = c.campaign?.source || page?.searchParams.get('source') || page?.searchParams.get('ref');
  if (tagged) return sourceName(tagged);
  const referrer = URL.parse((c.page?.referrer ?? e.properties?.referrer ?? '') as string);
  const bare = (host: string) => host.replace(/^www\./, '');
  if (!referrer || (page && bare(page.hostname) === bare(referrer.hostname))) return '';
  return sourceName(referrerName(referrer.hostname, referrer.pathname));
}

/** Plausible's display of an empty value. */
const blank = (value: string, empty: string) => (value === '' ? empty : value);

/** A visit's dimension values (from its first event; entry and exit pages from its page views). */
export function visitValue(visit: Visit, dimension: string): string {
  const first = visit.all[0]!;
  const c = first.context ?? {};
  const pages = visit.all.filter((e) => e.type === 'page');
  switch (dimension) {
    case 'visit:entry_page':
      return pages.length ? pathOf(pages[0]!) : '';
    case 'visit:exit_page':
      return pages.length ? pathOf(pages[pages.length - 1]!) : '';
    case 'visit:source':
      return blank(sourceOf(first), 'Direct / None');
    case 'visit:referrer': {
      // The host without www. and the path, without query, fragment or trailing slashes.
      const ref = (c.page?.referrer ?? first.properties?.referrer ?? '') as string;
      const url = (c.page?.url ?? first.properties?.url ?? '') as string;
      const host = (u: string) => u.replace(/^[a-z]+:\/\//i, '').replace(/^www\./, '').split(/[/?#]/)[0]!;
      const shown = ref && host(ref) === host(url) ? '' : ref.replace(/[?#].*$/, '').replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/(www[.])?/, '').replace(/\/+$/, '');
      return blank(shown, 'Direct / None');
    }
    case 'visit:utm_source': {
      // Plausible's: the campaign's source, else the landing page's `source` or `ref` parameter.
      const page = URL.parse((c.page?.url ?? first.properties?.url ?? '') as string);
      return blank(c.campaign?.source || page?.searchParams.get('source') || page?.searchParams.get('ref') || '', '(not set)');
    }
    case 'visit:utm_medium':
      return blank(c.campaign?.medium ?? '', '(not set)');
    case 'visit:utm_campaign':
      return blank(c.campaign?.name ?? '', '(not set)');
    case 'visit:utm_content':
      return blank(c.campaign?.content ?? '', '(not set)');
    case 'visit:utm_term':
      return blank(c.campaign?.term ?? '', '(not set)');
    case 'visit:country':
      return c.location?.country ?? '';
    case 'visit:country_name':
      return c.location?.country ? new Intl.DisplayNames(['en'], { type: 'region' }).of(c.location.country)! : '';
    case 'visit:region':
      return c.location?.region ?? '';
    case 'visit:city_name':
      return c.location?.city ?? '';
    case 'visit:browser':
      return blank(c.browser?.name ?? '', '(not set)');
    case 'visit:os':
      return blank(c.os?.name ?? '', '(not set)');
    case 'visit:device': {
      const d = (c.device?.type ?? '') as string;
      return blank(d && d[0]!.toUpperCase() + d.slice(1), '(not set)');
    }
  }
  throw new Error(`no visit dimension ${dimension}`);
}

function eventValue(e: Ev, dimension: string): string {
  if (dimension === 'event:page') return pathOf(e);
  if (dimension === 'event:goal') return e.type === 'track' ? (e.event ?? '') : '';
  if (dimension === 'event:name') return e.type === 'page' ? 'pageview' : (e.event ?? '');
  if (dimension.startsWith('event:props:')) return String(e.properties?.[dimension.slice('event:props:'.length)] ?? '');
  throw new Error(`no event dimension ${dimension}`);
}

/** The wall-clock fields of the instant `ms` in `timezone`, as text: year, month, day, hour, minute, second. */
function wallFields(ms: number, timezone: string): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', string> {
  const fields = { year: '', month: '', day: '', hour: '', minute: '', second: '' };
  const format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  for (const p of format.formatToParts(new Date(ms))) if (p.type in fields) fields[p.type as keyof typeof fields] = p.value;
  return fields;
}

/** The instant the hour of `timezone` holding `ms` starts at (India's hours start at :30 of UTC's). */
function localHourStart(ms: number, timezone: string): number {
  const w = wallFields(ms, timezone);
  return ms - (ms % 1000) - (Number(w.minute) * 60 + Number(w.second)) * 1000;
}

/** The label of the time bucket of `ms` in the site's `timezone`: its local hour, day or month. */
function timeValue(ms: number, bucket: string, timezone: string): string {
  const w = wallFields(ms, timezone);
  if (bucket === 'time:hour') return `${w.year}-${w.month}-${w.day} ${w.hour}:00:00`;
  if (bucket === 'time:month') return `${w.year}-${w.month}-01`;
  return `${w.year}-${w.month}-${w.day}`;
}

export type Filter = unknown[];

function matchesFilter(filter: Filter, value: (dimension: string) => string): boolean {
  const [op] = filter as [string];
  if (op === 'and') return (filter[1] as Filter[]).every((f) => matchesFilter(f, value));
  if (op === 'or') return (filter[1] as Filter[]).some((f) => matchesFilter(f, value));
  if (op === 'not') return !matchesFilter(filter[1] as Filter, value);
  const [, dimension, clauses, modifiers] = filter as [string, string, string[], { case_sensitive?: boolean } | undefined];
  const sensitive = modifiers?.case_sensitive !== false;
  const v = sensitive ? value(dimension) : value(dimension).toLowerCase();
  const cs = sensitive ? clauses : clauses.map((c) => c.toLowerCase());
  switch (op) {
    case 'is':
      return cs.includes(v);
    case 'is_not':
      return !cs.includes(v);
    case 'contains':
      return cs.some((c) => v.includes(c));
    case 'contains_not':
      return !cs.some((c) => v.includes(c));
    case 'matches':
      return clauses.some((r) => new RegExp(r, sensitive ? '' : 'i').test(value(dimension)));
    case 'matches_not':
      return !clauses.some((r) => new RegExp(r, sensitive ? '' : 'i').test(value(dimension)));
  }
  throw new Error(op);
}

/** What a top-level filter names: visit dimensions only, `event:page` only, or anything else (as the service routes it). */
function filterKind(filter: Filter): 'visit' | 'page' | 'other' {
  const names: string[] = [];
  const walk = (f: Filter): void => {
    if (f[0] === 'and' || f[0] === 'or') (f[1] as Filter[]).forEach(walk);
    else if (f[0] === 'not') walk(f[1] as Filter);
    else names.push(String(f[1]));
  };
  walk(filter);
  if (names.length > 0 && names.every((n) => n.startsWith('visit:'))) return 'visit';
  if (names.length > 0 && names.every((n) => n === 'event:page')) return 'page';
  return 'other';
}

/**
 * Which of the service's ways answers a query (src/web-analytics/stats/stored-visits.ts): from the
 * visits (visit and time dimensions, filters of visits or pages), the top pages, or the range's
 * events each with its visit.
 */
function routeOf(query: ReferenceQuery): 'visits' | 'pages' | 'events' {
  const dims = query.dimensions ?? [];
  const kinds = (query.filters ?? []).map(filterKind);
  if (kinds.includes('other')) return 'events';
  const counts = query.metrics.some((m) => m === 'pageviews' || m === 'events');
  const visitMetrics = ['visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit', 'percentage'];
  const paged = kinds.includes('page');
  const byTime = dims.every((d) => d.startsWith('time'));
  if (
    dims.every((d) => !d.startsWith('event:')) &&
    query.metrics.every((m) => visitMetrics.includes(m) || (!paged && (m === 'pageviews' || m === 'events'))) &&
    !(byTime && counts && kinds.length > 0)
  )
    return 'visits';
  if (dims.length === 1 && dims[0] === 'event:page' && !kinds.includes('visit') && query.metrics.every((m) => ['visitors', 'pageviews', 'events', 'bounce_rate'].includes(m))) return 'pages';
  return 'events';
}

/** ClickHouse's `round` of a float: half to even. */
export function roundHalfEven(x: number, digits = 0): number {
  const f = 10 ** digits;
  const y = x * f;
  const r = Math.round(y);
  const rounded = Math.abs(y % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  return rounded / f;
}

export interface ReferenceQuery {
  metrics: string[];
  dimensions?: string[];
  filters?: Filter[];
  order_by?: Array<[string, 'asc' | 'desc']>;
  pagination?: { limit?: number; offset?: number };
}

/**
 * The answer's rows and total row count for `query` over `visits` (those active in the range, which
 * starts at `from`), computed the plain way, by the route the service takes (routeOf), with time
 * buckets in the site's `timezone`:
 * - visits: the visits the visit filters select (and with page filters, that have an event of the
 *   range on such a page), under their values and their last event's time bucket (every hour they
 *   were active for `time:hour`); page views and events of the range under their own time bucket;
 * - pages: each page's visitors, page views and events of the range, and the bounce rate of the
 *   visits entering on it;
 * - events: for each visit, the events of the range the filters select (the filters see each
 *   event's own values and its visit's); event metrics count those events, visit metrics the
 *   visits with at least one, once each, under their last event's bucket and their entry page.
 */
export function reference(visits: readonly Visit[], query: ReferenceQuery, from = -Infinity, timezone = 'UTC'): { rows: Array<{ dimensions: string[]; metrics: number[] }>; total: number } {
  const dims = query.dimensions ?? [];
  const filters = query.filters ?? [];
  const goalFree = filters.filter((f) => f[1] !== 'event:goal');
  const pageFilters = filters.filter((f) => f[1] === 'event:page');
  const valueFor = (visit: Visit, e: Ev) => (d: string) => (d.startsWith('visit:') ? visitValue(visit, d) : eventValue(e, d));
  const keyOf = (visit: Visit, e: Ev) => dims.map((d) => (d.startsWith('time') ? timeValue(e.at, d, timezone) : d.startsWith('event:props:') ? valueFor(visit, e)(d) || '(none)' : valueFor(visit, e)(d)));
  const visitKey = (visit: Visit) => {
    const entry = visit.all.find((e) => e.type === 'page');
    return dims.map((d) => (d.startsWith('time') ? timeValue(visit.end, d, timezone) : d === 'event:page' ? (entry ? pathOf(entry) : undefined) : d.startsWith('event:') ? undefined : visitValue(visit, d)));
  };
  interface Group {
    dimensions: string[];
    visitors: Set<string>;
    visits: number;
    pageviews: number;
    events: number;
    sessions: Visit[];
    bounceSessions: Visit[];
  }
  const groups = new Map<string, Group>();
  const group = (key: string[]) => {
    const k = JSON.stringify(key);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { dimensions: key, visitors: new Set(), visits: 0, pageviews: 0, events: 0, sessions: [], bounceSessions: [] }));
    return g;
  };
  const totalVisitors = new Set<string>();
  const totalVisitors0 = new Set<string>();
  const route = routeOf(query);
  if (route === 'visits') {
    // Visits selected by their attributes and, with page filters, by an event of the range on such a page.
    const visitFilters = filters.filter((f) => filterKind(f) === 'visit');
    for (const visit of visits) {
      if (!visitFilters.every((f) => matchesFilter(f, (d) => visitValue(visit, d)))) continue;
      if (pageFilters.length > 0 && !visit.events.some((e) => pageFilters.every((f) => matchesFilter(f, (d) => pathOf(e))))) continue;
      // Under the bucket of its last event, or every hour of the zone it was active in, from the range's first.
      const hours: number[] = [];
      for (let h = Math.max(localHourStart(visit.start, timezone), localHourStart(from, timezone)); h <= visit.end; h += HOUR) hours.push(h);
      const times = dims.includes('time:hour') ? hours : [visit.end];
      const entry = visit.all.find((e) => e.type === 'page');
      totalVisitors.add(visit.personId);
      for (const time of times) {
        const g = group(dims.map((d) => (d.startsWith('time') ? timeValue(time, d, timezone) : visitValue(visit, d))));
        g.visitors.add(visit.personId);
        g.visits++;
        g.sessions.push(visit);
        if (pageFilters.every((f) => entry !== undefined && matchesFilter(f, () => pathOf(entry)))) g.bounceSessions.push(visit);
      }
      const g = group(dims.map((d) => (d.startsWith('time') ? timeValue(visit.end, d, timezone) : visitValue(visit, d))));
      // Page views and events of the range: by their own time bucket, else under their visit's values.
      for (const e of visit.events) {
        const eg = dims.length > 0 && dims.every((d) => d.startsWith('time')) ? group(dims.map((d) => timeValue(e.at, d, timezone))) : g;
        eg.events++;
        if (e.type === 'page') eg.pageviews++;
      }
    }
  } else if (route === 'pages') {
    // Each page's visitors, page views and events from the range's events; its bounce rate of the visits entering on it.
    for (const visit of visits) {
      for (const e of visit.events) {
        if (!pageFilters.every((f) => matchesFilter(f, () => pathOf(e)))) continue;
        const g = group([pathOf(e)]);
        g.visitors.add(e.personId);
        g.visits = Math.max(g.visits, 1);
        g.events++;
        if (e.type === 'page') g.pageviews++;
      }
    }
    for (const visit of visits) {
      const entry = visit.all.find((e) => e.type === 'page');
      const g = entry && groups.get(JSON.stringify([pathOf(entry)]));
      if (g) g.bounceSessions.push(visit);
    }
  } else {
    for (const visit of visits) {
      const selected = visit.events.filter((e) => filters.every((f) => matchesFilter(f, valueFor(visit, e))) && (!dims.includes('event:goal') || (e.type === 'track' && e.event)));
      if (visit.events.some((e) => goalFree.every((f) => matchesFilter(f, valueFor(visit, e))))) totalVisitors0.add(visit.personId);
      if (selected.length > 0) totalVisitors.add(visit.personId);
      const seen = new Set<string>();
      for (const e of selected) {
        const key = keyOf(visit, e);
        const g = group(key);
        g.visitors.add(visit.personId);
        g.events++;
        if (e.type === 'page') g.pageviews++;
        const k = JSON.stringify(key);
        if (!seen.has(k)) {
          seen.add(k);
          g.visits++;
        }
      }
      if (selected.length > 0 && query.metrics.some((m) => ['bounce_rate', 'visit_duration', 'views_per_visit'].includes(m))) {
        // Counted under the values of its last event's bucket and its entry page, when the range holds such an event.
        const key = visitKey(visit);
        const entry = visit.all.find((e) => e.type === 'page');
        const there = visit.events.some((e) => dims.every((d, i) => (d.startsWith('time') ? timeValue(e.at, d, timezone) === key[i] : d === 'event:page' ? pathOf(e) === key[i] : true)));
        if (key.every((v) => v !== undefined) && there) {
          const g = group(key as string[]);
          g.sessions.push(visit);
          const entersOnPage = pageFilters.every((f) => entry !== undefined && matchesFilter(f, (d) => (d === 'event:page' ? pathOf(entry) : valueFor(visit, entry)(d))));
          if (entersOnPage) g.bounceSessions.push(visit);
        }
      }
    }
  }
  const isBounce = (v: Visit) => v.all.filter((e) => e.type === 'page').length === 1 && !v.all.some((e) => e.type !== 'page' && e.context?.interactive !== false);
  const duration = (v: Visit) => Math.floor((v.end - v.start) / 1000);
  const metric = (g: Group, m: string): number => {
    switch (m) {
      case 'visitors':
        return g.visitors.size;
      case 'visits':
        return g.visits;
      case 'pageviews':
        return g.pageviews;
      case 'events':
        return g.events;
      case 'bounce_rate':
        return g.bounceSessions.length ? roundHalfEven((g.bounceSessions.filter(isBounce).length / g.bounceSessions.length) * 100) : 0;
      case 'visit_duration':
        return g.sessions.length ? roundHalfEven(g.sessions.reduce((a, v) => a + duration(v), 0) / g.sessions.length) : 0;
      case 'views_per_visit':
        return g.sessions.length ? roundHalfEven(g.sessions.reduce((a, v) => a + v.all.filter((e) => e.type === 'page').length, 0) / g.sessions.length, 2) : 0;
      case 'percentage':
        return totalVisitors.size ? roundHalfEven((g.visitors.size / totalVisitors.size) * 100, 2) : 0;
      case 'conversion_rate':
        return totalVisitors0.size ? roundHalfEven((g.visitors.size / totalVisitors0.size) * 100, 2) : 0;
    }
    throw new Error(m);
  };
  let list = [...groups.values()].filter((g) => g.visits > 0 || g.sessions.length > 0);
  if (dims.length === 0) list = [groups.get('[]') ?? group([])];
  const rows = list.map((g) => ({ dimensions: g.dimensions, metrics: query.metrics.map((m) => metric(g, m)) }));
  const order = query.order_by ?? [...dims.filter((d) => d.startsWith('time')).map((d) => [d, 'asc'] as [string, 'asc']), [query.metrics[0]!, 'desc'] as [string, 'desc']];
  const valueOf = (row: (typeof rows)[number], name: string) => (dims.includes(name) ? row.dimensions[dims.indexOf(name)]! : row.metrics[query.metrics.indexOf(name)]!);
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  rows.sort((a, b) => {
    for (const [name, direction] of order) {
      const c = cmp(valueOf(a, name), valueOf(b, name));
      if (c !== 0) return direction === 'asc' ? c : -c;
    }
    for (let i = 0; i < dims.length; i++) {
      const c = cmp(a.dimensions[i]!, b.dimensions[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  const offset = query.pagination?.offset ?? 0;
  const limit = query.pagination?.limit ?? 10_000;
  return { rows: rows.slice(offset, offset + limit), total: rows.length };
}
