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

  /** A page; its Content-Security-Policy and other security headers come from src/http/security-headers.ts. */
  page(which: 'console' | 'docs', acceptEncoding: string | null): Response {
    return this.respond(this.pages[which], acceptEncoding, { 'cache-control': REVALIDATE });
  }

  private respond(asset: Asset, acceptEncoding: string | null, headers: Record<string, string>): Response {
    const gzip = /\bgzip\b/.test(acceptEncoding ?? '');
    if (gzip) asset.gzipped ??= gzipSync(asset.body);
    return new Response(gzip ? asset.gzipped : asset.body, {
      headers: { 'content-type': asset.type, vary: 'accept-encoding', ...(gzip ? { 'content-encoding': 'gzip' } : {}), ...headers },
    });
  }
}
