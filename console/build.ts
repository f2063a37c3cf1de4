/**
 * Builds the web console and the API reference page into src/console/dist/, which is committed
 * so that `npm start` and the Docker image (which copies src/) serve them without a build step:
 *   bun console/build.ts [--out DIR]
 * Names carry a hash of their content (served with long caching); the two HTML pages do not.
 * Prints each file's size and fails when the console (its page, script and styles) is over
 * CONSOLE_BUDGET_BYTES gzipped. tests/console/build.test.ts checks the committed copy is current.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = join(import.meta.dir, '..');
/** The whole console, gzipped, at most (issue 17). */
const CONSOLE_BUDGET_BYTES = 300 * 1024;
/** Where the service finds the built files (src/console/assets.ts reads the same folder). */
const DEFAULT_OUT = join(ROOT, 'src', 'console', 'dist');
const SCALAR = join(ROOT, 'node_modules', '@scalar', 'api-reference', 'dist', 'browser', 'standalone.js');
const ASSETS_URL = '/console/assets';
/** The overview's country flags (country-flag-icons, 3:2): one SVG a country, loaded only when shown. */
const FLAGS = join(ROOT, 'node_modules', 'country-flag-icons', '3x2');

const outIndex = process.argv.indexOf('--out');
const out = outIndex > 0 ? process.argv[outIndex + 1]! : DEFAULT_OUT;

const hashOf = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 12);

// The flags of ISO 3166 alpha-2 codes, named `flag-<hash of the set>-DE.svg`: the console names a
// country's file from the two constants defined below, so it needs no table of hashed names.
const flags = readdirSync(FLAGS)
  .filter((n) => /^[A-Z]{2}\.svg$/.test(n))
  .sort()
  .map((n) => [n.slice(0, 2), new Uint8Array(readFileSync(join(FLAGS, n)))] as const);
const flagSet = createHash('sha256');
for (const [code, bytes] of flags) flagSet.update(code).update(bytes);
const FLAG_SET = flagSet.digest('hex').slice(0, 12);

const result = await Bun.build({
  entrypoints: [join(import.meta.dir, 'src', 'main.ts'), join(import.meta.dir, 'src', 'docs.ts')],
  target: 'browser',
  format: 'esm',
  minify: true,
  sourcemap: 'none',
  naming: { entry: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]' },
  throw: true,
  define: { FLAG_SET: JSON.stringify(FLAG_SET), FLAG_CODES: JSON.stringify(flags.map(([code]) => code).join(' ')) },
});

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
const files = new Map<string, Uint8Array>();
for (const output of result.outputs) files.set(basename(output.path), new Uint8Array(await output.arrayBuffer()));
const scalar = new Uint8Array(readFileSync(SCALAR));
files.set(`scalar-standalone-${hashOf(scalar)}.js`, scalar);
for (const [code, bytes] of flags) files.set(`flag-${FLAG_SET}-${code}.svg`, bytes);

const named = (prefix: string, ext: string) => {
  const name = [...files.keys()].find((n) => n.startsWith(`${prefix}-`) && n.endsWith(ext));
  if (!name) throw new Error(`the build made no ${prefix}*${ext}`);
  return `${ASSETS_URL}/${name}`;
};

const page = (title: string, body: string, head = '') => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>${title}</title>
${head}</head>
<body>
${body}
</body>
</html>
`;
const indexHtml = page(
  'Event analytics',
  `<div id="app"><noscript>The console needs JavaScript.</noscript></div>\n<script type="module" src="${named('main', '.js')}"></script>`,
  `<link rel="stylesheet" href="${named('main', '.css')}">\n`,
);
const docsHtml = page(
  'Event analytics · API reference',
  `<div id="app"></div>\n<script src="${named('scalar-standalone', '.js')}"></script>\n<script type="module" src="${named('docs', '.js')}"></script>`,
);

for (const [name, bytes] of files) writeFileSync(join(out, 'assets', name), bytes);
writeFileSync(join(out, 'index.html'), indexHtml);
writeFileSync(join(out, 'docs.html'), docsHtml);

const gz = (bytes: Uint8Array | string) => gzipSync(bytes, { level: 9 }).byteLength;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const consoleFiles: Array<[string, Uint8Array | string]> = [
  ['index.html', indexHtml],
  ...[...files].filter(([n]) => n.startsWith('main-')),
];
let total = 0;
console.log('console (GET /console):');
for (const [name, bytes] of consoleFiles) {
  const size = gz(bytes);
  total += size;
  console.log(`  ${name.padEnd(32)} ${kb(typeof bytes === 'string' ? bytes.length : bytes.byteLength).padStart(10)}  ${kb(size).padStart(9)} gzipped`);
}
console.log(`  total ${kb(total)} gzipped, budget ${kb(CONSOLE_BUDGET_BYTES)}`);
const flagSizes = flags.map(([, bytes]) => gz(bytes));
console.log(`  and ${flags.length} flags, each loaded when its country is shown: at most ${kb(Math.max(...flagSizes))} gzipped, ${kb(flagSizes.reduce((a, b) => a + b, 0))} for all`);
console.log('API reference (GET /docs):');
for (const [name, bytes] of [...files].filter(([n]) => !n.startsWith('main-') && !n.startsWith('flag-'))) {
  console.log(`  ${name.padEnd(32)} ${kb(bytes.byteLength).padStart(10)}  ${kb(gz(bytes)).padStart(9)} gzipped`);
}
if (total > CONSOLE_BUDGET_BYTES) {
  console.error(`the console is ${kb(total)} gzipped, over its budget of ${kb(CONSOLE_BUDGET_BYTES)}`);
  process.exit(1);
}
