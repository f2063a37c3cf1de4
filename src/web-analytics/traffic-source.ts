import { referrerName } from './referrer-names';

const withoutWww = (host: string) => (host.startsWith('www.') ? host.slice(4) : host);

/** A URL, or undefined for anything that is not an absolute http(s) URL. */
export function httpUrl(text: unknown): URL | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  const url = URL.parse(text);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? url : undefined;
}

/**
 * Plausible's "visit:source": the campaign's utm_source, else the referrer's known name (or its
 * host without `www.`); undefined for direct traffic and for a referrer on the page's own host
 * (a navigation within the site).
 */
export function trafficSource(page: URL | undefined, referrer: URL | undefined, utmSource: string | undefined): string | undefined {
  if (utmSource) return utmSource;
  if (!referrer) return undefined;
  const host = withoutWww(referrer.hostname);
  if (page && withoutWww(page.hostname) === host) return undefined;
  return referrerName(host);
}
