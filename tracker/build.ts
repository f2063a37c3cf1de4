/**
 * Builds the tracker: type-checks tracker/src (its own tsconfig: DOM, no Bun), bundles it into
 * one minified script and checks its size. `npm run build:tracker` writes it to
 * tracker/dist/script.js, which is committed: the service serves that file (under Bun, Deno and
 * in the image alike, with nothing to build at start), and a test fails when it is not what the
 * sources build to.
 */
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

/** The tracker's budget, gzipped: a script tag on every page of a site must cost next to nothing. */
export const TRACKER_MAX_GZIP_BYTES = 2048;

const HERE = import.meta.dir;
export const TRACKER_DIST = join(HERE, 'dist', 'script.js');

export interface BuiltTracker {
  code: string;
  gzipBytes: number;
}

async function typeCheck(): Promise<void> {
  const tsc = Bun.spawn([join(HERE, '..', 'node_modules', '.bin', 'tsc'), '--noEmit', '-p', HERE], { stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text(), tsc.exited]);
  if (code !== 0) throw new Error(`the tracker does not type-check:\n${out}${err}`);
}

export async function buildTracker(): Promise<BuiltTracker> {
  await typeCheck();
  const result = await Bun.build({ entrypoints: [join(HERE, 'src', 'index.ts')], target: 'browser', format: 'iife', minify: true });
  if (!result.success) throw new AggregateError(result.logs, 'the tracker did not build');
  const code = await result.outputs[0]!.text();
  return { code, gzipBytes: gzipSync(code, { level: 9 }).byteLength };
}

if (import.meta.main) {
  const { code, gzipBytes } = await buildTracker();
  console.log(`tracker: ${code.length} bytes, ${gzipBytes} bytes gzipped (limit ${TRACKER_MAX_GZIP_BYTES})`);
  if (gzipBytes > TRACKER_MAX_GZIP_BYTES) {
    console.error(`the tracker is over its budget of ${TRACKER_MAX_GZIP_BYTES} bytes gzipped`);
    process.exit(1);
  }
  await Bun.write(TRACKER_DIST, code);
}
