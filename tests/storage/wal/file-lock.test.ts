import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tryLockFile } from '../../../src/storage/wal/file-lock';
import { PROJECT_ROOT } from '../../helpers/project-root';

const root = mkdtempSync(join(tmpdir(), 'file-lock-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Under Deno, takes the lock on `path`, prints whether it got it, and holds it until killed. */
function denoTryLock(path: string) {
  const code = `import { tryLockFile } from ${JSON.stringify(join(PROJECT_ROOT, 'src/storage/wal/file-lock.ts'))};
    const lock = tryLockFile(Deno.env.get('LOCK_PATH'));
    console.log(lock ? 'locked' : 'refused');
    if (lock) setInterval(() => {}, 1 << 30);`;
  const proc = Bun.spawn([join(PROJECT_ROOT, 'node_modules', '.bin', 'deno'), 'eval', '--ext=ts', code], { env: { ...process.env, LOCK_PATH: path }, stdout: 'pipe', stderr: 'inherit' });
  const answer = (async () => {
    let out = '';
    for await (const chunk of proc.stdout) {
      out += new TextDecoder().decode(chunk);
      if (out.includes('\n')) return out.trim();
    }
    return `exited with ${await proc.exited}: ${out}`;
  })();
  return { proc, answer };
}

test('the lock taken under Deno and the one taken under Bun are the same: each refuses the other while held', async () => {
  const path = join(root, 'lock');
  const deno = denoTryLock(path);
  try {
    expect(await deno.answer).toBe('locked');
    expect(tryLockFile(path)).toBeUndefined();
  } finally {
    deno.proc.kill('SIGKILL');
    await deno.proc.exited;
  }
  const bun = tryLockFile(path)!;
  expect(bun).toBeDefined();
  const refused = denoTryLock(path);
  expect(await refused.answer).toBe('refused');
  await refused.proc.exited;
  bun.release();
  const after = denoTryLock(path);
  expect(await after.answer).toBe('locked');
  after.proc.kill('SIGKILL');
  await after.proc.exited;
}, 30_000);
