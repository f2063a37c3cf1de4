/** The path of a request's URL, without building a URL object (for hooks that run on every request). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const query = url.indexOf('?', start);
  return url.slice(start, query < 0 ? undefined : query);
}
