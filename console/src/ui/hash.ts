/**
 * The console's address lives in the URL's fragment: `#/<page>/<id>?<state>`, so that a
 * dashboard, a person or a search reopens from its URL (and can be sent to a colleague who has
 * a key). The shell picks the page by the first segment; a page reads the rest here.
 */
export interface HashRoute {
  /** Path segments after the page's own, decoded: `#/persons/a%2Fb` gives ['a/b']. */
  rest: string[];
  params: URLSearchParams;
}

export function currentRoute(hash = location.hash): HashRoute {
  const text = hash.replace(/^#\/?/, '');
  const question = text.indexOf('?');
  const path = question >= 0 ? text.slice(0, question) : text;
  const segments = path.split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  return { rest: segments.slice(1), params: new URLSearchParams(question >= 0 ? text.slice(question + 1) : '') };
}

/** `#/<page>/<segment...>?<params>`, each segment encoded; empty params are left out. */
export function hashOf(page: string, segments: readonly string[] = [], params: Record<string, string | number | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') query.set(k, String(v));
  const path = [page, ...segments.map((s) => encodeURIComponent(s))].join('/');
  return `#/${path}${query.size ? `?${query}` : ''}`;
}

/** The page an address names: its first segment (`#/dashboards/7?x=1`: `dashboards`). */
export const pageOf = (hash: string): string => hash.replace(/^#\/?/, '').split(/[/?]/, 1)[0]!;

/**
 * Records a page's state in the URL without reopening the page (no hashchange). Not when the
 * address names another page: the user has left for it, and its hashchange is still queued. A
 * late answer of the page being left (the overview's workspace read, say) would otherwise write
 * its own address back, and the shell would then open the page left instead of the one chosen.
 */
export function replaceHash(hash: string): void {
  if (pageOf(location.hash) !== pageOf(hash)) return;
  if (location.hash !== hash) history.replaceState(null, '', hash);
}
