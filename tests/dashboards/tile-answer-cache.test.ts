import { describe, expect, test } from 'bun:test';
import { TileAnswerCache } from '../../src/dashboards/tile-answer-cache';

describe("a dashboard's kept answers", () => {
  const MINUTE = 60_000;

  test('an answer is current until events are loaded or it is older than the current age; it stays the last answer', () => {
    const cache = new TileAnswerCache(MINUTE);
    cache.keep('db', 'q', cache.version('db'), { n: 1 }, 1_000);
    expect(cache.current('db', 'q', 2_000)?.answer).toEqual({ n: 1 });
    expect(cache.current('db', 'q', 1_000 + MINUTE)).toBeUndefined();
    cache.changed('db');
    expect(cache.current('db', 'q', 2_000)).toBeUndefined();
    expect(cache.last('db', 'q')).toEqual({ answer: { n: 1 }, at: 1_000, version: 0 });
    // Another database's events change nothing here, and its questions are its own.
    cache.keep('other', 'q', cache.version('other'), { n: 2 }, 3_000);
    cache.changed('other');
    expect(cache.last('db', 'q')!.answer).toEqual({ n: 1 });
  });

  test('an answer asked while events were loaded is kept as the last one, not as current', () => {
    const cache = new TileAnswerCache(MINUTE);
    const version = cache.version('db');
    cache.changed('db');
    cache.keep('db', 'q', version, { n: 1 }, 1_000);
    expect(cache.current('db', 'q', 1_500)).toBeUndefined();
    expect(cache.last('db', 'q')!.answer).toEqual({ n: 1 });
  });

  test('an answer asked earlier does not replace one asked later', () => {
    const cache = new TileAnswerCache(MINUTE);
    cache.keep('db', 'q', 0, { n: 2 }, 2_000);
    cache.keep('db', 'q', 0, { n: 1 }, 1_000);
    expect(cache.last('db', 'q')!.answer).toEqual({ n: 2 });
  });

  test('after an erasure or a removal, no answer asked before it is kept or shown, even one still being answered', () => {
    const cache = new TileAnswerCache(MINUTE);
    cache.keep('db', 'q', cache.version('db'), { n: 1 }, 1_000);
    const asked = cache.version('db');
    cache.withdraw('db');
    expect(cache.last('db', 'q')).toBeUndefined();
    // The answer asked before the erasure comes back afterwards: not kept.
    cache.keep('db', 'q', asked, { n: 1 }, 2_000);
    expect(cache.last('db', 'q')).toBeUndefined();
    // One asked after it is.
    cache.keep('db', 'q', cache.version('db'), { n: 0 }, 3_000);
    expect(cache.current('db', 'q', 3_500)?.answer).toEqual({ n: 0 });
  });

  test('a current age of 0 keeps nothing', () => {
    const cache = new TileAnswerCache(0);
    cache.keep('db', 'q', cache.version('db'), { n: 1 }, 1_000);
    expect(cache.last('db', 'q')).toBeUndefined();
  });

  test('at most 1,000 answers are kept, the oldest kept going first, and none over 256 KiB of JSON', () => {
    const cache = new TileAnswerCache(MINUTE);
    for (let i = 0; i <= 1000; i++) cache.keep('db', `q${i}`, 0, i, i);
    expect(cache.last('db', 'q0')).toBeUndefined();
    expect(cache.last('db', 'q1')!.answer).toBe(1);
    expect(cache.last('db', 'q1000')!.answer).toBe(1000);
    cache.keep('db', 'long', 0, 'x'.repeat(256 * 1024), 5_000);
    expect(cache.last('db', 'long')).toBeUndefined();
  });
});
