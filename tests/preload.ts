import { afterAll } from 'bun:test';
import { runCleanups } from './helpers/after-run';

// A preload's afterAll runs once, after the last test file.
afterAll(runCleanups);
