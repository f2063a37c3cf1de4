import { expect, test } from 'bun:test';
import { FairScheduler } from '../../src/queries/fair-scheduler';

/** A task that records its start and ends when the test says so. */
function gate(started: string[], label: string) {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { run: () => (started.push(label), opened), open: () => open() };
}

test("a workspace's tasks wait behind each other, and free slots go to the workspaces in turn", async () => {
  const scheduler = new FairScheduler(2, 1);
  const started: string[] = [];
  const tasks = ['A1', 'A2', 'A3', 'B1', 'B2', 'C1'].map((label) => ({ label, ...gate(started, label) }));
  const done = tasks.map((t) => scheduler.schedule(t.label[0]!, t.run));
  expect(started).toEqual(['A1', 'B1']);
  expect([scheduler.runningOf('A'), scheduler.waitingOf('A'), scheduler.waiting, scheduler.waitingWith(1)]).toEqual([1, 2, 4, 5]);
  tasks[0]!.open();
  await done[0];
  await Bun.sleep(1); // the slot is given back just after the task's answer
  // A's slot went to C, the workspace that had waited longest without running anything.
  expect(started).toEqual(['A1', 'B1', 'C1']);
  for (const t of tasks) t.open();
  await Promise.all(done);
  expect(started.slice(3).sort()).toEqual(['A2', 'A3', 'B2']);
  await scheduler.idle();
});
