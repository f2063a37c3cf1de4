import { referrerName, sourceName, withoutWww } from './sources/source-names';

/** A query parameter of `url` (its search looked at first: most pages have neither, and searchParams costs). */
const parameter = (url: URL | undefined, name: string) => (url?.search.includes(`${name}=`) ? url.searchParams.get(name) : null);

/** A URL, or undefined for anything that is not an absolute http(s) URL. */
export function httpUrl(text: unknown): URL | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  const url = URL.parse(text);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? url : undefined;
}

/**
 * Plausible's "visit:source": the page's tag (its utm_source, else its `source` or `ref`
 * parameter), else the referrer's name in the referrer database (or its host without `www.`), both
 * merged with the known names in any case (sources/source-names.ts); undefined for direct traffic,
 * for a referrer on the page's own host (a navigation within the site) and for `localhost`.
 */
export function trafficSource(page: URL | undefined, referrer: URL | undefined, utmSource: string | undefined): string | undefined {
  const tagged = utmSource || parameter(page, 'source') || parameter(page, 'ref');
  if (tagged) return sourceName(tagged);
  if (!referrer || referrer.hostname === 'localhost') return undefined;
  if (page && withoutWww(page.hostname) === withoutWww(referrer.hostname)) return undefined;
  return sourceName(referrerName(referrer.hostname, referrer.pathname));
}
