/**
 * The path of a request's URL, without building a URL object (for hooks that run on every
 * request). Never throws: Bun hands over URLs `new URL` refuses, a request target without scheme
 * and host (`/p?q`, from a request without a Host header) and a CONNECT's `host:port`, which has
 * no path and is returned whole.
 */
export function pathOf(url: string): string {
  let start = 0;
  if (url.charCodeAt(0) !== 47 /* / */) {
    const scheme = url.indexOf('://');
    if (scheme < 0) return url;
    start = url.indexOf('/', scheme + 3);
    if (start < 0) return '/';
  }
  const query = url.indexOf('?', start);
  return url.slice(start, query < 0 ? undefined : query);
}
