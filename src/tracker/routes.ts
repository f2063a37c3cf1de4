import { Elysia } from 'elysia';
import type { TrackerScript } from './tracker-script';

/** Browsers revalidate within the hour (ETag, 304), so a new version reaches every site that soon. */
const CACHE_CONTROL = 'public, max-age=3600';
const ACCEPTS_GZIP = /\bgzip\b/i;

/** Whether an If-None-Match header names `etag` (weak or strong, in a list, or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

/**
 * `GET <TRACKER_SCRIPT_PATH>`: the tracker, gzipped when the browser takes it. Readable from any
 * origin (no key in it), so a page may load it with `crossorigin` and subresource integrity.
 */
export function trackerRoutes(script: TrackerScript, scriptPath: string) {
  const common = {
    etag: script.etag,
    'cache-control': CACHE_CONTROL,
    vary: 'Accept-Encoding',
    'access-control-allow-origin': '*',
    'cross-origin-resource-policy': 'cross-origin',
    'x-content-type-options': 'nosniff',
  };
  return new Elysia({ name: 'tracker' }).get(
    scriptPath,
    ({ request }) => {
      if (matches(request.headers.get('if-none-match'), script.etag)) return new Response(null, { status: 304, headers: common });
      const gzip = ACCEPTS_GZIP.test(request.headers.get('accept-encoding') ?? '');
      return new Response(gzip ? script.gzipped : script.body, {
        headers: { ...common, 'content-type': 'text/javascript; charset=utf-8', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
      });
    },
    { detail: { hide: true } },
  );
}
