import { describeError } from '../api';
import { notice } from './notice';

/**
 * What a list page's buttons run: `action` (answering what it did, or nothing), then the list
 * reloaded; `message` says what was done, or why `what` failed.
 */
export function listAction(message: HTMLElement, reload: () => Promise<void>) {
  return async (what: string, action: () => Promise<string | undefined>) => {
    try {
      const done = await action();
      await reload();
      if (done) message.replaceChildren(notice('info', done));
    } catch (err) {
      message.replaceChildren(notice('error', `${what} failed`, describeError(err)));
    }
  };
}
