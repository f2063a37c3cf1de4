import { expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../helpers/project-root';

const DIST = join(PROJECT_ROOT, 'src', 'console', 'dist');
const bun = join(PROJECT_ROOT, 'node_modules', '.bin', 'bun');

/** Every file of a built folder with its bytes. */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(join(dir, 'assets'))) files.set(`assets/${name}`, readFileSync(join(dir, 'assets', name), 'latin1'));
  for (const name of ['index.html', 'docs.html']) files.set(name, readFileSync(join(dir, name), 'latin1'));
  return files;
}

test('the committed console build is what console/ builds now, and within its size budget', async () => {
  const out = mkdtempSync(join(tmpdir(), 'console-build-'));
  try {
    const build = Bun.spawn([bun, 'console/build.ts', '--out', out], { cwd: PROJECT_ROOT, stdout: 'pipe', stderr: 'pipe' });
    const [code, printed, errors] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
    console.log(printed.trim());
    expect(errors).toBe('');
    expect(code).toBe(0);
    expect(printed).toMatch(/total [\d.]+ KB gzipped, budget 300\.0 KB/);
    const fresh = filesOf(out);
    const committed = filesOf(DIST);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [name, bytes] of fresh) expect(committed.get(name) === bytes, `${name} differs: run bun console/build.ts and commit src/console/dist`).toBe(true);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('the console type-checks (console/tsconfig.json: DOM, strict)', async () => {
  const tsc = Bun.spawn([join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc'), '--noEmit', '-p', 'console'], { cwd: PROJECT_ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [code, printed] = await Promise.all([tsc.exited, new Response(tsc.stdout).text()]);
  expect(printed).toBe('');
  expect(code).toBe(0);
});
