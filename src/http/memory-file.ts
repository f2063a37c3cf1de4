import { gzipSync } from 'node:zlib';

const ACCEPTS_GZIP = /\bgzip\b/i;

/** A file served from memory; its gzipped form is made once, when first asked for, unless given. */
export interface MemoryFile {
  readonly body: Uint8Array;
  readonly type: string;
  gzipped(): Uint8Array;
}

export function memoryFile(body: Uint8Array, type: string, gzipped?: Uint8Array): MemoryFile {
  let compressed = gzipped;
  return { body, type, gzipped: () => (compressed ??= gzipSync(body)) };
}

/** `file` as the client takes it: gzipped when its Accept-Encoding allows. */
export function memoryFileResponse(file: MemoryFile, acceptEncoding: string | null, headers: Record<string, string>): Response {
  const gzip = ACCEPTS_GZIP.test(acceptEncoding ?? '');
  return new Response(gzip ? file.gzipped() : file.body, {
    headers: { 'content-type': file.type, vary: 'Accept-Encoding', ...(gzip ? { 'content-encoding': 'gzip' } : {}), ...headers },
  });
}
