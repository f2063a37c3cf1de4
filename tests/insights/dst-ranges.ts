import { randomLog, resolvePersons, type Sent } from './event-log';

/**
 * A seeded log and ranges over it that cross Europe/Paris's daylight-saving changes of 2025
 * (30 March, one hour skipped; 26 October, one hour repeated), for the differential tests of the
 * insights that count actors per period. The log starts weeks before the ranges (first events
 * ever lie before them) and ends after them (events past `dateTo` must not count).
 */

export interface DstRange {
  name: string;
  interval: 'hour' | 'day' | 'week' | 'month';
  timezone: string;
  dateFrom: string;
  dateTo: string;
}

export const DST_RANGES: DstRange[] = [
  { name: 'days in Paris over the spring change', interval: 'day', timezone: 'Europe/Paris', dateFrom: '2025-03-10T00:00:00+01:00', dateTo: '2025-04-10T00:00:00+02:00' },
  { name: 'weeks from Monday in Paris, from mid-week', interval: 'week', timezone: 'Europe/Paris', dateFrom: '2025-02-05T10:00:00+01:00', dateTo: '2025-04-27T23:00:00+02:00' },
  { name: 'months in UTC', interval: 'month', timezone: 'UTC', dateFrom: '2025-02-01T00:00:00Z', dateTo: '2025-05-10T12:00:00Z' },
  { name: 'hours in Paris over the autumn change', interval: 'hour', timezone: 'Europe/Paris', dateFrom: '2025-10-25T12:00:00+02:00', dateTo: '2025-10-27T00:00:00+01:00' },
  { name: 'hours in Paris over the spring change', interval: 'hour', timezone: 'Europe/Paris', dateFrom: '2025-03-29T20:30:00+01:00', dateTo: '2025-03-30T12:00:00+02:00' },
];

/** About 7,000 events: January to May 2025 (400 persons) and a denser log around 26 October (300). */
export function dstLog(seed: number): Sent[] {
  const spring = randomLog({ seed, from: Date.parse('2025-01-15T00:00:00Z'), to: Date.parse('2025-05-15T00:00:00Z'), persons: 400 });
  const autumn = randomLog({ seed: seed + 1, from: Date.parse('2025-10-24T00:00:00Z'), to: Date.parse('2025-10-28T00:00:00Z'), persons: 300 });
  // The autumn log reuses the spring log's ids: persons and groups of even numbers keep theirs
  // (active again after months), those of odd numbers get ids of their own (new in autumn).
  const fresh = (id: string | undefined) => id?.replace(/^(user|anon|group)-(\d*[13579])\b/, 'fall-$1-$2');
  const renamed = autumn.map(({ at, index, personId, ...e }) => ({ ...e, userId: fresh(e.userId), anonymousId: fresh(e.anonymousId), groupId: fresh(e.groupId) }));
  return resolvePersons([...spring.map(({ at, index, personId, ...e }) => e), ...renamed]);
}
