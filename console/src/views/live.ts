import { ApiError, api, describeError, REVOKED } from '../api';
import { h, typingIn } from '../dom';
import { session, signOut } from '../session';
import { readEventStream, type StreamFilters } from '../stream';
import { EVENT_TYPES, type Event, type KeyIdentity } from '../types';
import { openDialog } from '../ui/dialog';
import { formatCount, formatTime } from '../ui/format';
import { jsonView } from '../ui/json-view';
import { notice } from '../ui/notice';

/** Events kept on the page; older ones leave the bottom of the list. */
const MAX_ROWS = 500;
/** Waits before reconnecting after the stream broke: doubling, up to the last. */
const RETRY_MS = [500, 1000, 2000, 5000, 10_000];
/** Typing in a filter restarts the stream once the typing pauses. */
const FILTER_DEBOUNCE_MS = 300;

function summary(e: Event): string {
  const data = e.properties ?? e.traits ?? e.context;
  return data ? JSON.stringify(data) : '';
}

export function showEvent(e: Event): void {
  void openDialog(`${e.type}${e.event ? ` · ${e.event}` : ''}`, jsonView(e));
}

/**
 * Live events: the workspace's events as they are stored, newest first, from GET /events/stream.
 * Pausing keeps the stream open and holds new events back until resumed; `p` toggles it.
 */
export function liveView(root: HTMLElement): () => void {
  const typeSelect = h('select', { id: 'live-type', 'aria-label': 'Type' }, h('option', { value: '' }, 'All types'), ...EVENT_TYPES.map((t) => h('option', { value: t }, t)));
  const eventInput = h('input', { id: 'live-event', type: 'search', placeholder: 'Event name', 'aria-label': 'Event name' });
  const userInput = h('input', { id: 'live-user', type: 'search', placeholder: 'userId', 'aria-label': 'userId' });
  const pauseButton = h('button', { type: 'button', class: 'secondary', 'aria-keyshortcuts': 'p', 'aria-pressed': 'false' }, 'Pause');
  const clearButton = h('button', { type: 'button', class: 'secondary' }, 'Clear');
  const status = h('span', { class: 'status status-connecting', role: 'status' }, 'Connecting…');
  const counter = h('span', { class: 'muted' });
  const list = h('ol', { class: 'live-list', 'aria-label': 'Events, newest first', 'aria-live': 'off' });
  const empty = notice('empty', 'Waiting for events', 'Events appear here the moment they are stored. Send one with your public key, for example:');
  empty.append(h('pre', { class: 'snippet' }, `curl -X POST ${location.origin}/events \\\n  -H 'Authorization: Bearer <public key>' -H 'Content-Type: application/json' \\\n  -d '{"events":[{"type":"track","event":"signup","userId":"u1"}]}'`));
  const body = h('div', { class: 'live-body' }, empty, list);
  const banner = h('div', { class: 'banner-slot' });

  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Live events'), status, counter),
    h('div', { class: 'toolbar', role: 'search' }, typeSelect, eventInput, userInput, pauseButton, clearButton),
    banner,
    body,
  );

  let paused = false;
  let held: Event[] = [];
  let shown = 0;
  let received = 0;
  let controller: AbortController | undefined;
  let retry = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const setStatus = (kind: 'live' | 'connecting' | 'paused' | 'error', text: string) => {
    status.className = `status status-${kind}`;
    status.textContent = text;
  };
  const updateCounter = () => {
    counter.textContent = `${formatCount(received)} received${held.length ? ` · ${formatCount(held.length)} held while paused` : ''}`;
  };
  const row = (e: Event) => {
    const item = h(
      'li',
      {},
      h(
        'button',
        { type: 'button', class: 'live-row' },
        h('time', { datetime: e.timestamp }, formatTime(e.timestamp)),
        h('span', { class: `type type-${e.type}` }, e.type),
        h('span', { class: 'live-event' }, e.event || '—'),
        h('span', { class: 'live-user' }, e.userId || e.anonymousId || ''),
        h('span', { class: 'live-summary' }, summary(e)),
      ),
    );
    item.firstElementChild!.addEventListener('click', () => showEvent(e));
    return item;
  };
  const show = (events: Event[]) => {
    if (events.length === 0) return;
    empty.hidden = true;
    const fragment = document.createDocumentFragment();
    for (let i = events.length - 1; i >= 0; i--) fragment.append(row(events[i]!));
    list.prepend(fragment);
    shown += events.length;
    while (shown > MAX_ROWS) {
      list.lastElementChild?.remove();
      shown--;
    }
  };

  const filters = (): StreamFilters => ({ type: typeSelect.value, event: eventInput.value.trim(), userId: userInput.value.trim() });

  /** A stream that ended or failed: signed out, told to wait, or retried with backoff. */
  const recover = async (err: unknown) => {
    if (stopped) return;
    if (err instanceof ApiError && err.status === 401) return signOut(REVOKED);
    if (err instanceof ApiError && err.status === 400) {
      setStatus('error', 'Filter refused');
      banner.replaceChildren(notice('error', 'The service refused these filters', describeError(err)));
      return;
    }
    const wait = err instanceof ApiError && err.retryAfter ? err.retryAfter * 1000 : RETRY_MS[Math.min(retry, RETRY_MS.length - 1)]!;
    retry++;
    setStatus('error', 'Reconnecting…');
    if (err instanceof ApiError && err.status === 429) banner.replaceChildren(notice('error', 'Too many live views open', `${describeError(err)} Other tabs of the console with this key hold them.`));
    retryTimer = setTimeout(connect, wait);
  };

  function connect(): void {
    controller?.abort();
    clearTimeout(retryTimer);
    const current = session();
    if (!current || stopped) return;
    controller = new AbortController();
    setStatus('connecting', 'Connecting…');
    readEventStream(
      current.key,
      filters(),
      {
        onOpen: () => {
          retry = 0;
          banner.replaceChildren();
          setStatus(paused ? 'paused' : 'live', paused ? 'Paused' : 'Live');
        },
        onEvent: (e) => {
          received++;
          if (paused) held.push(e);
          else show([e]);
          updateCounter();
        },
        onDropped: (n) => banner.replaceChildren(notice('info', `${formatCount(n)} events skipped`, 'They arrived faster than this page could read them. All of them are stored: see the Explorer.')),
        onEnd: (reason) => {
          // A deleted workspace revokes the key: GET /whoami answers 401 and signs out.
          if (reason === 'workspace deleted') void api<KeyIdentity>('GET', '/whoami').catch(() => {});
        },
      },
      controller.signal,
    ).then(
      () => recover(new Error('the stream closed')),
      (err) => (controller?.signal.aborted ? undefined : recover(err)),
    );
  }

  const togglePause = () => {
    paused = !paused;
    pauseButton.textContent = paused ? 'Resume' : 'Pause';
    pauseButton.setAttribute('aria-pressed', String(paused));
    if (!paused) {
      show(held);
      held = [];
    }
    setStatus(paused ? 'paused' : 'live', paused ? 'Paused' : 'Live');
    updateCounter();
  };
  const restart = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      list.replaceChildren();
      shown = 0;
      held = [];
      empty.hidden = false;
      connect();
    }, FILTER_DEBOUNCE_MS);
  };
  pauseButton.addEventListener('click', togglePause);
  clearButton.addEventListener('click', () => {
    list.replaceChildren();
    shown = 0;
    empty.hidden = false;
  });
  typeSelect.addEventListener('change', restart);
  eventInput.addEventListener('input', restart);
  userInput.addEventListener('input', restart);
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'p' && !typingIn(e.target) && !e.ctrlKey && !e.metaKey && !document.querySelector('dialog[open]')) togglePause();
  };
  addEventListener('keydown', onKey);
  updateCounter();
  connect();
  return () => {
    stopped = true;
    controller?.abort();
    clearTimeout(retryTimer);
    clearTimeout(debounce);
    removeEventListener('keydown', onKey);
  };
}
