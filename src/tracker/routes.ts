import { Elysia } from 'elysia';
import { memoryFile, memoryFileResponse } from '../http/memory-file';
import type { TrackerScript } from './tracker-script';

/** Browsers revalidate within the hour (ETag, 304), so a new version reaches every site that soon. */
const CACHE_CONTROL = 'public, max-age=3600';

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
  };
  const file = memoryFile(script.body, 'text/javascript; charset=utf-8', script.gzipped);
  return new Elysia({ name: 'tracker' }).get(
    scriptPath,
    ({ request }) => {
      if (matches(request.headers.get('if-none-match'), script.etag)) return new Response(null, { status: 304, headers: common });
      return memoryFileResponse(file, request.headers.get('accept-encoding'), common);
    },
    { detail: { hide: true } },
  );
}
