import { expect, test } from 'bun:test';
import { ByteBudget } from '../../src/http/body-budget';

test("an owner past its share waits for its own bytes, and other owners' requests go before it", async () => {
  const budget = new ByteBudget(100, 40);
  const granted: string[] = [];
  expect(budget.tryAcquire(30, 'a')).toBe(true);
  // Over a's share (30 + 30 > 40): it waits, and holds up no one else.
  const aSecond = Promise.resolve(budget.acquire(30, 10_000, 'a')).then((ok) => ok && granted.push('a'));
  expect(budget.tryAcquire(30, 'b')).toBe(true);
  granted.push('b');
  expect(budget.inUse).toBe(60);
  budget.release(30, 'a');
  await aSecond;
  expect(granted).toEqual(['b', 'a']);
  expect(budget.inUse).toBe(60);
});

test('one body larger than a share still runs, alone for its owner', () => {
  const budget = new ByteBudget(100, 40);
  expect(budget.tryAcquire(60, 'a')).toBe(true);
  expect(budget.tryAcquire(1, 'a')).toBe(false);
  expect(budget.tryAcquire(40, 'b')).toBe(true);
});
