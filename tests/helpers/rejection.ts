/** The error `work` rejects with; fails the test when it resolves instead. */
export async function rejection(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}
