import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** What console/build.ts wrote: committed, so the service needs no build step. */
const DIST = fileURLToPath(new URL('./dist/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

/** Hashed names never change content: a year, and never revalidated. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The pages name the current hashed files, so they are revalidated on every load. */
const REVALIDATE = 'no-cache';

/**
 * Only what the console and the API reference page need; the rest of the defaults (a CSP for
 * every HTML answer) are the security-headers plugin's. Scalar adds its styles at run time,
 * hence 'unsafe-inline' for styles on /docs only.
 */
const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const DOCS_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

interface Asset {
  body: Buffer;
  gzipped?: Buffer;
  type: string;
}

/**
 * The built console and API reference page, read once at start and kept in memory (about 5 MB,
 * most of it Scalar); each file is gzipped the first time a client that accepts gzip asks for it.
 */
export class ConsoleAssets {
  private readonly assets = new Map<string, Asset>();
  private readonly pages: Record<'console' | 'docs', Asset>;

  constructor(dir = DIST) {
    for (const name of readdirSync(`${dir}/assets`)) {
      this.assets.set(name, { body: readFileSync(`${dir}/assets/${name}`), type: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream' });
    }
    this.pages = {
      console: { body: readFileSync(`${dir}/index.html`), type: CONTENT_TYPES['.html']! },
      docs: { body: readFileSync(`${dir}/docs.html`), type: CONTENT_TYPES['.html']! },
    };
  }

  /** A hashed file, or undefined for a name the build did not make. */
  asset(name: string, acceptEncoding: string | null): Response | undefined {
    const asset = this.assets.get(name);
    return asset && this.respond(asset, acceptEncoding, { 'cache-control': IMMUTABLE });
  }

  page(which: 'console' | 'docs', acceptEncoding: string | null): Response {
    return this.respond(this.pages[which], acceptEncoding, {
      'cache-control': REVALIDATE,
      'content-security-policy': which === 'console' ? CONSOLE_CSP : DOCS_CSP,
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    });
  }

  private respond(asset: Asset, acceptEncoding: string | null, headers: Record<string, string>): Response {
    const gzip = /\bgzip\b/.test(acceptEncoding ?? '');
    if (gzip) asset.gzipped ??= gzipSync(asset.body);
    return new Response(gzip ? asset.gzipped : asset.body, {
      headers: { 'content-type': asset.type, vary: 'accept-encoding', ...(gzip ? { 'content-encoding': 'gzip' } : {}), ...headers },
    });
  }
}
