import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

/** A tmpfs of `bytes` at `dir` (made if missing), for a full disk; false when this process may not mount one (not root). */
export function mountSmallDisk(dir: string, bytes: number): boolean {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function unmount(dir: string): void {
  execFileSync('umount', ['-l', dir]);
}
