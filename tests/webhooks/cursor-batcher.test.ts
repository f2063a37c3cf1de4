import { describe, expect, test } from 'bun:test';
import { CursorBatcher } from '../../src/webhooks/cursor-batcher';
import type { Cursor } from '../../src/webhooks/webhook-records';

const at = (n: number): Cursor => ({ parsedAt: `2026-11-23 00:00:0${n}.000000`, uuid: `00000000-0000-0000-0000-00000000000${n}` });

describe('the cursor batcher', () => {
  test('one insert at a time; cursors saved meanwhile go together in the next, the latest of each webhook', async () => {
    const writes: Array<Record<string, string>> = [];
    let release!: () => void;
    const batcher = new CursorBatcher(async (cursors) => {
      writes.push(Object.fromEntries([...cursors].map(([uuid, c]) => [uuid, c.parsedAt.slice(-8)])));
      if (writes.length === 1) await new Promise<void>((r) => (release = r));
    });
    const first = batcher.save('a', at(1));
    await Bun.sleep(1);
    const waiting = [batcher.save('a', at(2)), batcher.save('b', at(3)), batcher.save('a', at(4))];
    await Bun.sleep(5);
    expect(writes).toHaveLength(1);
    release();
    await Promise.all([first, ...waiting]);
    expect(writes).toEqual([{ a: '1.000000' }, { a: '4.000000', b: '3.000000' }]);
  });

  test('a failed insert fails its callers only; the next insert runs', async () => {
    let fail = true;
    const batcher = new CursorBatcher(async () => {
      if (fail) throw new Error('storage down');
    });
    await expect(batcher.save('a', at(1))).rejects.toThrow('storage down');
    fail = false;
    await batcher.save('a', at(2));
  });
});
