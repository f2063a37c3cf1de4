/**
 * A known event log for the insight builders' browser test (tests/console/insights.browser.test.ts):
 * ten persons over the week before today in Europe/Paris, the test workspace's zone, at 10:00 to
 * 11:00 UTC so that every day is the same day there. Today is Paris's: from 23:00 UTC it is a day
 * ahead of UTC's, and a log of UTC's days left the signups out of the insights' last seven days.
 *
 * - Day -6: u1..u10 view /pricing; u1..u6 then view /signup and sign up (u1..u3 on the pro plan,
 *   u4..u6 on the free one). u1 browsed anonymously first (anon-1), then identified.
 * - Day -5: u1..u3 purchase (amounts 10, 20, 30); u1..u4 view /home.
 * - Day -4: u1, u2 view /home; u7, u8 sign up (team plan).
 * - Day -3: u1 views /home; u7 purchases (amount 40).
 *
 * So the funnel $pageview → signup → purchase over the range is 10 → 8 → 4.
 */
export const DAY_MS = 86_400_000;

export interface LogEvent {
  type: string;
  event?: string;
  userId?: string;
  anonymousId?: string;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  timestamp: string;
}

export function insightsLog(now = Date.now(), timeZone = 'Europe/Paris'): LogEvent[] {
  // 00:00 UTC of the zone's date ('en-CA' writes it as YYYY-MM-DD).
  const today = Date.parse(new Date(now).toLocaleDateString('en-CA', { timeZone }));
  let minute = 0;
  // Each event a minute after the one before (within its day), so orders are unambiguous.
  const at = (day: number) => new Date(today + day * DAY_MS + 10 * 3_600_000 + minute++ * 60_000).toISOString();
  const events: LogEvent[] = [];
  const page = (user: string, day: number, path: string, anonymousId?: string) =>
    events.push({ type: 'page', event: path, ...(anonymousId ? { anonymousId } : { userId: user }), properties: { path, referrer: 'https://news.example/' }, timestamp: at(day) });
  const track = (user: string, day: number, event: string, properties: Record<string, unknown>) => events.push({ type: 'track', event, userId: user, properties, timestamp: at(day) });
  const users = Array.from({ length: 10 }, (_, i) => `u${i + 1}`);

  minute = 0;
  page('u1', -6, '/pricing', 'anon-1');
  events.push({ type: 'identify', userId: 'u1', anonymousId: 'anon-1', traits: { plan: 'pro', company: 'Acme' }, timestamp: at(-6) });
  for (const user of users.slice(1)) page(user, -6, '/pricing');
  users.forEach((user, i) => {
    if (i >= 6) return;
    const plan = i < 3 ? 'pro' : 'free';
    page(user, -6, '/signup');
    track(user, -6, 'signup', { plan, source: i % 2 === 0 ? 'ad' : 'search' });
    if (user !== 'u1') events.push({ type: 'identify', userId: user, traits: { plan, company: i < 3 ? 'Acme' : 'Globex' }, timestamp: at(-6) });
  });
  minute = 0;
  users.slice(0, 3).forEach((user, i) => track(user, -5, 'purchase', { plan: 'pro', amount: (i + 1) * 10 }));
  for (const user of users.slice(0, 4)) page(user, -5, '/home');
  minute = 0;
  for (const user of ['u1', 'u2']) page(user, -4, '/home');
  for (const user of ['u7', 'u8']) track(user, -4, 'signup', { plan: 'team', source: 'ad' });
  minute = 0;
  page('u1', -3, '/home');
  track('u7', -3, 'purchase', { plan: 'team', amount: 40 });
  return events;
}
