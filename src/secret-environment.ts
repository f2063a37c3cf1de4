import { readFileSync } from 'node:fs';

/**
 * The variables whose values must not stay readable in the process's start-up environment: keys,
 * the metrics token and the ClickHouse credentials (a URL may hold them too).
 */
export const SECRET_VARIABLES = ['PUBLIC_API_KEYS', 'PRIVATE_API_KEYS', 'METRICS_TOKEN', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_URL'] as const;

/**
 * `/proc/self/environ` shows the environment the process was started with, read from the memory
 * where the kernel put it, whatever the process does to `process.env` later. The embedded engine
 * runs in this process and its `file()` reads any path, so if a statement ever got past the guard
 * it could read the keys there. Once the configuration is read, the values of `names` are
 * overwritten in that memory (with `*`); `/proc/self/environ` then shows `NAME=****`.
 *
 * The memory is reached through the runtime's foreign-function interface: Bun's `bun:ffi`, or
 * Deno's (with --allow-ffi). Returns what it could not do, for the log; undefined once done.
 */
export function scrubStartupEnvironment(names: readonly string[]): string | undefined {
  if (process.platform !== 'linux') return 'only Linux keeps the start-up environment in /proc/self/environ';
  const memory = startupEnvironmentMemory();
  if (typeof memory === 'string') return memory;
  const text = Buffer.from(memory.buffer, memory.byteOffset, memory.byteLength).toString('latin1');
  for (const name of names) {
    const prefix = `${name}=`;
    // One entry per name at most; the last one wins for getenv, so every one is overwritten.
    for (let at = text.indexOf(prefix); at >= 0; at = text.indexOf(prefix, at + 1)) {
      if (at > 0 && text[at - 1] !== '\0') continue;
      const end = text.indexOf('\0', at);
      memory.fill(0x2a, at + prefix.length, end < 0 ? text.length : end);
    }
  }
  return undefined;
}

/** The bytes between env_start and env_end of /proc/self/stat (fields 50 and 51), writable. */
function startupEnvironmentMemory(): Uint8Array | string {
  const stat = readFileSync('/proc/self/stat', 'latin1');
  // Fields after the command name, which is in parentheses and may hold spaces; the first is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return 'the kernel does not tell where the environment is';
  if (typeof Bun !== 'undefined') {
    // Required here, not imported: the module does not exist under Deno.
    const { toArrayBuffer } = require('bun:ffi') as typeof import('bun:ffi');
    return new Uint8Array(toArrayBuffer(start as unknown as import('bun:ffi').Pointer, 0, end - start));
  }
  const deno = (globalThis as { Deno?: DenoFfi }).Deno;
  if (!deno?.UnsafePointer) return 'this runtime has no foreign-function interface';
  try {
    const pointer = deno.UnsafePointer.create(BigInt(start));
    return new Uint8Array(new deno.UnsafePointerView(pointer).getArrayBuffer(end - start));
  } catch (err) {
    return `the foreign-function interface is not allowed (${(err as Error).message})`;
  }
}

/** The part of Deno's FFI used here; declared locally because the project type-checks against bun-types only. */
interface DenoFfi {
  UnsafePointer?: { create(address: bigint): unknown };
  UnsafePointerView: new (pointer: unknown) => { getArrayBuffer(length: number): ArrayBuffer };
}
