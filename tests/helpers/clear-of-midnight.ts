const DAY = 86_400_000;

/**
 * Returns once the UTC clock is at least `margin` away from midnight, waiting past it if needed.
 * A test whose visits sit minutes before now and whose answers count whole days would otherwise
 * see those minutes fall in yesterday, or today turn into yesterday while it runs.
 */
export async function clearOfMidnight(margin = 3 * 60_000): Promise<void> {
  const sinceMidnight = Date.now() % DAY;
  const wait = sinceMidnight < margin ? margin - sinceMidnight : sinceMidnight > DAY - margin ? DAY - sinceMidnight + margin : 0;
  if (wait === 0) return;
  console.log(`waiting ${Math.ceil(wait / 1000)} s, until ${margin / 60_000} minutes past midnight UTC`);
  await Bun.sleep(wait);
}
