/**
 * Waits until `check` holds, for a change that arrives on a timer of the service's (such as the
 * workspace refresh). Fails the test with `what` when it has not happened within `limitMs`.
 */
export async function eventually(what: string, check: () => Promise<boolean>, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not true after ${limitMs} ms: ${what}`);
    await Bun.sleep(20);
  }
}
