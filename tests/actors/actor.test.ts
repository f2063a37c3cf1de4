import { describe, expect, test } from 'bun:test';
import { Actor, ActorStoppedError, MailboxFullError } from '../../src/actors/actor';

describe('Actor', () => {
  test('handles messages one at a time, in the order they were sent', async () => {
    const log: string[] = [];
    let active = 0;
    const actor = new Actor<number, number>(async (n) => {
      active++;
      log.push(`start ${n} (active ${active})`);
      await Bun.sleep(1);
      active--;
      return n * 2;
    }, 10);
    const results = await Promise.all([1, 2, 3].map((n) => actor.ask(n)));
    expect(results).toEqual([2, 4, 6]);
    expect(log).toEqual(['start 1 (active 1)', 'start 2 (active 1)', 'start 3 (active 1)']);
  });

  test('refuses a message when the mailbox is full, at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const actor = new Actor<number>(() => gate, 1);
    const first = actor.ask(1); // being handled
    const second = actor.ask(2); // waits in the mailbox
    await expect(actor.ask(3)).rejects.toBeInstanceOf(MailboxFullError);
    release();
    await Promise.all([first, second]);
  });

  test('a failing message rejects only its own caller', async () => {
    const actor = new Actor<number, number>(async (n) => {
      if (n === 2) throw new Error('two');
      return n;
    }, 10);
    const [a, b, c] = await Promise.allSettled([actor.ask(1), actor.ask(2), actor.ask(3)]);
    expect(a).toEqual({ status: 'fulfilled', value: 1 });
    expect(b.status).toBe('rejected');
    expect(c).toEqual({ status: 'fulfilled', value: 3 });
  });

  test('stop lets queued messages finish and refuses new ones', async () => {
    const done: number[] = [];
    const actor = new Actor<number>(async (n) => {
      await Bun.sleep(1);
      done.push(n);
    }, 10);
    const queued = [actor.ask(1), actor.ask(2)];
    await actor.stop();
    expect(done).toEqual([1, 2]);
    await Promise.all(queued);
    await expect(actor.ask(3)).rejects.toBeInstanceOf(ActorStoppedError);
  });
});
