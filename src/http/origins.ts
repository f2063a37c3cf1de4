/** What an origin setting may hold, for error messages. */
export const ORIGIN_RULE = 'an origin such as https://www.example.com (scheme, host and port; no path)';

/**
 * `text` as a browser's `Origin` header would carry it (lowercase host, no default port), or
 * undefined when it is not an http(s) origin: a path, query, fragment or user name is refused
 * rather than dropped, so a setting never means less than it says.
 */
export function normalizeOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
  return url.origin;
}

