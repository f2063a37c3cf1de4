import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/** The built tracker (tracker/build.ts), committed with the sources. */
const BUILT = new URL('../../tracker/dist/script.js', import.meta.url);

/** The string the built script holds where the collection path goes. */
const COLLECT_PATH_PLACEHOLDER = '"__COLLECT_PATH__"';

/** The tracker as served: made once at start, so a request costs no work but a header check. */
export interface TrackerScript {
  body: Uint8Array;
  gzipped: Uint8Array;
  /** A strong ETag: the hash of the served text. */
  etag: string;
}

/** The built tracker with the service's collection path in it, compressed and hashed. */
export function loadTrackerScript(collectPath: string): TrackerScript {
  let built: string;
  try {
    built = readFileSync(BUILT, 'utf8');
  } catch (err) {
    throw new Error(`the tracker script ${BUILT.pathname} cannot be read (npm run build:tracker makes it): ${(err as Error).message}`);
  }
  if (built.split(COLLECT_PATH_PLACEHOLDER).length !== 2) throw new Error(`the tracker script ${BUILT.pathname} must hold ${COLLECT_PATH_PLACEHOLDER} once`);
  const body = new TextEncoder().encode(built.replace(COLLECT_PATH_PLACEHOLDER, JSON.stringify(collectPath)));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, gzipped: gzipSync(body, { level: 9 }), etag };
}
