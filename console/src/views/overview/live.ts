import { h } from '../../dom';
import { stats } from './query';

/** Visitors seen in this many last minutes count as on the site now. */
export const LIVE_MINUTES = 5;
/** How often the count is asked again. */
export const LIVE_REFRESH_MS = 30_000;

/** An ISO date-time of the API's form, to the second, in UTC: `2026-11-27T14:05:00+00:00`. */
const isoSecond = (d: Date) => `${d.toISOString().slice(0, 19)}+00:00`;

/**
 * "N current visitors": the visitors of the last five minutes, asked of the same API with a
 * date-time range, again every 30 seconds. Returns the element and what stops it.
 */
export function liveVisitors(site: string): { element: HTMLElement; stop: () => void } {
  const count = h('strong', {}, '…');
  const element = h('span', { class: 'ov-live', role: 'status', 'aria-live': 'polite', title: `Visitors in the last ${LIVE_MINUTES} minutes, asked again every ${LIVE_REFRESH_MS / 1000} seconds` }, h('span', { class: 'ov-live-dot', 'aria-hidden': 'true' }), count, h('span', { class: 'ov-live-text' }, ' current visitors'));
  let asked: AbortController | undefined;
  const ask = async () => {
    asked?.abort();
    const controller = (asked = new AbortController());
    const now = new Date();
    try {
      const answer = await stats({ site_id: site, metrics: ['visitors'], date_range: [isoSecond(new Date(now.getTime() - LIVE_MINUTES * 60_000)), isoSecond(now)] }, controller.signal);
      const n = Number(answer.results[0]?.metrics[0] ?? 0);
      count.textContent = String(n);
      element.dataset.value = String(n);
      element.lastElementChild!.textContent = n === 1 ? ' current visitor' : ' current visitors';
      element.classList.remove('ov-live-error');
    } catch {
      if (controller.signal.aborted) return;
      count.textContent = '?';
      element.classList.add('ov-live-error');
    }
  };
  void ask();
  const timer = setInterval(() => void ask(), LIVE_REFRESH_MS);
  return {
    element,
    stop: () => {
      clearInterval(timer);
      asked?.abort();
    },
  };
}
