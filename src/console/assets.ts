import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryFile, memoryFileResponse, type MemoryFile } from '../http/memory-file';

/** What console/build.ts wrote: committed, so the service needs no build step. */
const DIST = fileURLToPath(new URL('./dist/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Hashed names never change content: a year, and never revalidated. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The pages name the current hashed files, so they are revalidated on every load. */
const REVALIDATE = 'no-cache';

/**
 * The built console and API reference page, read once per process and kept in memory (about
 * 4 MB, most of it Scalar); each file is gzipped the first time a client that accepts gzip asks
 * for it.
 */
export class ConsoleAssets {
  private readonly assets = new Map<string, MemoryFile>();
  private readonly pages: Record<'console' | 'docs', MemoryFile>;

  private constructor() {
    for (const name of readdirSync(`${DIST}/assets`)) {
      this.assets.set(name, memoryFile(readFileSync(`${DIST}/assets/${name}`), CONTENT_TYPES[extname(name)] ?? 'application/octet-stream'));
    }
    this.pages = {
      console: memoryFile(readFileSync(`${DIST}/index.html`), CONTENT_TYPES['.html']!),
      docs: memoryFile(readFileSync(`${DIST}/docs.html`), CONTENT_TYPES['.html']!),
    };
  }

  private static loaded: ConsoleAssets | undefined;

  /** The files, read on first use: every app of the process shares them. */
  static load(): ConsoleAssets {
    return (ConsoleAssets.loaded ??= new ConsoleAssets());
  }

  /** A hashed file, or undefined for a name the build did not make. */
  asset(name: string, acceptEncoding: string | null): Response | undefined {
    const asset = this.assets.get(name);
    return asset && memoryFileResponse(asset, acceptEncoding, { 'cache-control': IMMUTABLE });
  }

  /** A page; its Content-Security-Policy and other security headers come from src/http/security-headers.ts. */
  page(which: 'console' | 'docs', acceptEncoding: string | null): Response {
    return memoryFileResponse(this.pages[which], acceptEncoding, { 'cache-control': REVALIDATE });
  }
}
