import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterRun } from './after-run';

/**
 * The engine binds one data directory per process at a time, so every test in this process
 * shares one temporary directory and isolates itself with databases of its own.
 */
export const ENGINE_DIR = mkdtempSync(join(tmpdir(), 'analytics-test-'));
afterRun(() => rmSync(ENGINE_DIR, { recursive: true, force: true }));

let counter = 0;
/** A database name no other test in this process uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
}
