import { seededRandom } from '../helpers/seeded-random';
import { resolvePersons, type LogEvent } from '../insights/event-log';
import { DAY, gapToNext, HOUR, markedBot, MINUTE, randomVisitContext, visitEvent, type Ev } from './stats-reference';

/**
 * Seeded random logs for the stored visits' differential test, with the ways stored visits go
 * stale: events sent late (hours after newer ones) and out of order within and across requests,
 * anonymous browsing then identify (Segment's way: the anonymousId kept, the userId added), one
 * person on two devices (two anonymousIds identified as the same userId, visits overlapping in
 * time), server-side events with only the userId (no page, no browser: no visit), some of them
 * within a signed-in user's visit (the same visit key), crawlers,
 * visits across midnight; the test restarts the
 * service and erases a person at points the log names.
 */

export interface StoredVisitsLog {
  /** Every event in sending order (`index`), with its person once every link is known. */
  events: Ev[];
  /** The requests in sending order: consecutive slices of `events`. */
  requests: Ev[][];
  /** The service is killed and started again after this many requests. */
  restartAfter: number;
  /** The userId erased (regulation DELETE) after this many requests; none of its events is sent later. */
  eraseAfter: number;
  erased: string;
}

export interface StoredVisitsLogOptions {
  seed: number;
  /** The first day's midnight (UTC, ms); visits start within `days` days from it. */
  from: number;
  days: number;
  persons: number;
  /**
   * Only what visits per person (the definition before stored visits) and visits per device
   * count alike: one device per person, no userId-only events beside a device's, no visit across
   * midnight.
   */
  sameDefinitions?: boolean;
}

type Kind = 'cookieless' | 'signed' | 'identifies' | 'twoDevices' | 'server';

export function storedVisitsLog({ seed, from, days, persons, sameDefinitions = false }: StoredVisitsLogOptions): StoredVisitsLog {
  const random = seededRandom(seed);
  const events: LogEvent[] = [];
  for (let p = 0; p < persons; p++) {
    const r = random();
    const kind: Kind = sameDefinitions
      ? r < 0.4 ? 'cookieless' : r < 0.6 ? 'signed' : 'identifies'
      : r < 0.3 ? 'cookieless' : r < 0.4 ? 'signed' : r < 0.65 ? 'identifies' : r < 0.85 ? 'twoDevices' : 'server';
    const userId = `user-${p}`;
    const devices = kind === 'signed' ? [] : kind === 'twoDevices' ? [`anon-${p}-a`, `anon-${p}-b`] : [`anon-${p}`];
    const visits = 1 + Math.floor(random() * 4);
    // Every tenth person is a crawler, whose visits are no visits.
    const crawler = !sameDefinitions && p % 10 === 9;
    // Each identified device signs in during its last visit; its earlier visits are anonymous.
    const lastVisitOn = new Map<string, number>();
    const deviceOf = (s: number) => devices[kind === 'twoDevices' ? s % 2 : 0];
    for (let s = 0; s < visits; s++) if (deviceOf(s)) lastVisitOn.set(deviceOf(s)!, s);
    let previousStart = 0;
    for (let s = 0; s < visits; s++) {
      const day = from + Math.floor(random() * days) * DAY;
      const acrossMidnight = !sameDefinitions && random() < 0.15;
      let t = acrossMidnight ? day + 23 * HOUR + Math.floor(random() * 50) * MINUTE : day + 30 * MINUTE + Math.floor(random() * 19.5 * 60) * MINUTE;
      // The second device often starts while the first one's visit goes on.
      if (kind === 'twoDevices' && s % 2 === 1 && random() < 0.5) t = previousStart + Math.floor(random() * 10) * MINUTE + 1000;
      previousStart = t;
      const device = deviceOf(s);
      const signsIn = kind !== 'cookieless' && kind !== 'signed' && lastVisitOn.get(device!) === s;
      const visit = randomVisitContext(random);
      // Cities and regions beyond the shared pools, so that those dimensions have several values.
      const location = visit.context.location as Record<string, string>;
      if (location.country) Object.assign(location, { region: `${location.country}-${1 + Math.floor(random() * 2)}`, city: random() < 0.8 ? `City ${Math.floor(random() * 3)}` : '' });
      const count = 1 + Math.floor(random() * 6);
      const signInAt = signsIn ? Math.floor(random() * count) : Infinity;
      for (let k = 0; k < count; k++) {
        const timestamp = new Date(t).toISOString();
        if (k === signInAt) events.push({ type: 'identify', userId, anonymousId: device, traits: { plan: 'pro' }, timestamp });
        const who = kind === 'signed' ? { userId } : k >= signInAt ? { userId, anonymousId: device } : { anonymousId: device };
        const event = visitEvent(random, visit, who, k, timestamp);
        events.push(crawler ? markedBot(event) : event);
        // Plausible's tracker's engagement reports belong to no visit.
        if (random() < 0.05) events.push({ type: 'track', event: 'engagement', ...who, properties: { sd: 40 }, timestamp: new Date(t + 5000).toISOString() });
        // A server sends an order signed in with only the userId: a device of its own.
        if (kind === 'server' && k >= signInAt && random() < 0.5) events.push({ type: 'track', event: 'Order Completed', userId, properties: { revenue: 10 }, timestamp: new Date(t + 2000).toISOString() });
        // A server's call for a user browsing signed in (no anonymous id): the same visit key as
        // the browser's events, within their visit, yet of no visit (no page, no browser).
        if (kind === 'signed' && !sameDefinitions && random() < 0.3) events.push({ type: 'track', event: 'Invoice Sent', userId, properties: { amount: 10 }, timestamp: new Date(t + 1000).toISOString() });
        t += gapToNext(random);
      }
    }
  }
  // When each event is sent: mostly within minutes of its time, a tenth hours late (a phone
  // offline); requests of 20 to 50 events, each shuffled.
  const sendAt = new Map(events.map((e) => [e, Date.parse(e.timestamp) + (random() < 0.1 ? (2 + random() * 6) * HOUR : random() * 3 * MINUTE)]));
  const bySending = [...events].sort((a, b) => sendAt.get(a)! - sendAt.get(b)!);
  const sizes: number[] = [];
  for (let sent = 0; sent < bySending.length; sent += sizes[sizes.length - 1]!) sizes.push(20 + Math.floor(random() * 31));
  const shuffled: LogEvent[] = [];
  for (let i = 0, at = 0; i < sizes.length; at += sizes[i++]!) {
    const request = bySending.slice(at, at + sizes[i]!);
    for (let j = request.length - 1; j > 0; j--) {
      const o = Math.floor(random() * (j + 1));
      [request[j], request[o]] = [request[o]!, request[j]!];
    }
    shuffled.push(...request);
  }
  const sent = resolvePersons(shuffled) as Ev[];
  const requests: Ev[][] = [];
  for (let i = 0, at = 0; i < sizes.length; at += sizes[i++]!) requests.push(sent.slice(at, at + sizes[i]!));
  const restartAfter = Math.floor(requests.length * 0.4);
  const eraseAfter = Math.floor(requests.length * 0.8);
  // The person erased: an identified one (anonymous events linked to it go too) sending nothing after the erasure.
  const lastRequest = new Map<string, number>();
  requests.forEach((request, i) => request.forEach((e) => lastRequest.set(e.personId, i)));
  const erasable = [...lastRequest].filter(([person, last]) => last < eraseAfter && person.startsWith('user-') && sent.some((e) => e.personId === person && !e.userId));
  if (erasable.length === 0) throw new Error(`seed ${seed}: no identified person to erase`);
  const erased = erasable[Math.floor(random() * erasable.length)]![0];
  return { events: sent, requests, restartAfter, eraseAfter, erased };
}
