import { describe, expect, test } from 'bun:test';
import { VerdictCache } from '../../src/queries/verdict-cache';

describe('VerdictCache', () => {
  test('remembers a verdict by database and exact text', () => {
    const cache = new VerdictCache(10, 60_000);
    cache.set('ws_a', 'SELECT 1', 'SELECT 1');
    expect(cache.get('ws_a', 'SELECT 1')).toBe('SELECT 1');
    expect(cache.get('ws_b', 'SELECT 1')).toBeUndefined();
    expect(cache.get('ws_a', 'SELECT  1')).toBeUndefined();
  });

  test('holds at most maxEntries, dropping the oldest', () => {
    const cache = new VerdictCache(2, 60_000);
    cache.set('db', 'a', 'A');
    cache.set('db', 'b', 'B');
    cache.set('db', 'c', 'C');
    expect([cache.get('db', 'a'), cache.get('db', 'b'), cache.get('db', 'c')]).toEqual([undefined, 'B', 'C']);
  });

  test('forgets verdicts older than maxAgeMs, and everything on clear()', () => {
    const expired = new VerdictCache(10, -1);
    expired.set('db', 'a', 'A');
    expect(expired.get('db', 'a')).toBeUndefined();
    const cache = new VerdictCache(10, 60_000);
    cache.set('db', 'a', 'A');
    cache.clear();
    expect(cache.get('db', 'a')).toBeUndefined();
  });
});
