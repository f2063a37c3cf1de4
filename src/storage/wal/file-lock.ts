import { closeSync, openSync } from 'node:fs';
import { constants } from 'node:os';

/**
 * An exclusive `flock` on a file, held by this process until `release()` or its end. The kernel
 * drops the lock when the holder's last descriptor of the file closes, which its exit does
 * before it becomes a zombie: a dead holder never holds it, whatever its process id now names.
 * The descriptor is close-on-exec (both runtimes open files so), so a child cannot inherit it.
 */
export interface FileLock {
  release(): void;
}

/** The part of Deno's API used here; declared locally because the project type-checks against bun-types only. */
declare const Deno:
  | {
      openSync(path: string, options: { read: true; write: true; create: true }): { tryLockSync(exclusive: boolean): boolean; close(): void };
    }
  | undefined;

/**
 * Takes the lock on `path` (the file is made if missing, never emptied), or answers undefined
 * when another open of the file holds it: another process, or another caller in this one. Throws
 * when the file cannot be locked at all.
 */
export function tryLockFile(path: string): FileLock | undefined {
  if (typeof Deno !== 'undefined') {
    // Deno's own try-lock is flock(LOCK_EX | LOCK_NB), the same lock as Bun's below: a service
    // under Deno and one under Bun on the same log exclude each other.
    const file = Deno.openSync(path, { read: true, write: true, create: true });
    if (file.tryLockSync(true)) return { release: () => file.close() };
    file.close();
    return undefined;
  }
  // Bun has no file locks of its own: flock is called in the C library.
  const fd = openSync(path, 'a+');
  const { flock, errno } = libc();
  if (flock(fd, LOCK_EX | LOCK_NB) === 0) return { release: () => closeSync(fd) };
  const code = errno();
  closeSync(fd);
  if (code === constants.errno.EWOULDBLOCK) return undefined;
  throw new Error(`${path} cannot be locked (flock failed with errno ${code})`);
}

const LOCK_EX = 2;
const LOCK_NB = 4;

/** The C library's names for it: glibc's (Linux, where the engine's builds are glibc's) and macOS's. */
const LIBC = process.platform === 'darwin' ? { file: 'libc.dylib', errno: '__error' } : { file: 'libc.so.6', errno: '__errno_location' };

let bound: { flock(fd: number, operation: number): number; errno(): number } | undefined;

function libc(): NonNullable<typeof bound> {
  if (bound) return bound;
  // Required here, not imported: the module does not exist under Deno.
  const { dlopen, FFIType, read } = require('bun:ffi') as typeof import('bun:ffi');
  const { symbols } = dlopen(LIBC.file, {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    [LIBC.errno]: { args: [], returns: FFIType.ptr },
  });
  // errno is read right after the failed call, on the same thread, before anything else can set it.
  const errnoAt = symbols[LIBC.errno]!;
  bound = { flock: symbols.flock!, errno: () => read.i32(errnoAt()!, 0) };
  return bound;
}
