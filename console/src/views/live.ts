import { ApiError, api, describeError, REVOKED } from '../api';
import { h, typingIn } from '../dom';
import { onSignOut, session, signOut } from '../session';
import { readEventStream, type StreamFilters } from '../stream';
import { EVENT_TYPES, type Event, type KeyIdentity, type Page } from '../types';
import { openDialog } from '../ui/dialog';
import { eventLabel } from '../ui/event-label';
import { formatCount, formatTime } from '../ui/format';
import { jsonView } from '../ui/json-view';
import { keyValueText } from '../ui/key-values';
import { notice } from '../ui/notice';
import { zoneNote } from '../ui/zone-note';

/** Events kept on the page; older ones leave the bottom of the list. */
const MAX_ROWS = 500;
/** Waits before reconnecting after the stream broke: doubling, up to the last. */
const RETRY_MS = [500, 1000, 2000, 5000, 10_000];
/** Typing in a filter restarts the stream once the typing pauses. */
const FILTER_DEBOUNCE_MS = 300;

function summary(e: Event): string {
  const data = e.properties ?? e.traits ?? e.context;
  return data ? keyValueText(data) : '';
}

/**
 * What the page showed when it was left, so that coming back to it shows the same events (and
 * filters) at once, before the last 500 are read again. Kept in memory only, per workspace.
 */
let kept: { workspaceId: string; filters: Required<StreamFilters>; events: Event[] } | undefined;
onSignOut(() => (kept = undefined));

/** GET /events's parameters for the stream's filters: the newest stored first. */
function backfillQuery(filters: StreamFilters): string {
  const params = new URLSearchParams(Object.entries(filters).filter(([, v]) => v) as Array<[string, string]>);
  params.set('orderByField', 'parsedAt');
  params.set('orderByDirection', 'DESC');
  params.set('limit', String(MAX_ROWS));
  return params.toString();
}

/** The hover text of a row's arrival time (in `zone`): the event's own time when it differs. */
function arrivalTitle(e: Event, zone: string): string {
  const own = formatTime(e.timestamp, zone);
  const arrived = formatTime(e.parsedAt, zone);
  return own.slice(0, 19) === arrived.slice(0, 19) ? `Arrived ${own}` : `Arrived ${arrived}; the event's own time: ${own}`;
}

export function showEvent(e: Event): void {
  void openDialog(`${e.type}${e.event ? ` · ${e.event}` : ''}`, jsonView(e));
}

/**
 * Live events: the workspace's events as they are stored, newest first: the last 500 from
 * GET /events when the page opens, then new ones from GET /events/stream. Pausing keeps the
 * stream open and holds new events back until resumed; `p` toggles it.
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

  // Times in the workspace's zone (as signed in), as the overview and dashboards count days.
  const zone = session()!.identity.workspace.timezone || 'UTC';
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Live events'), status, counter, h('span', { class: 'spacer' }), zoneNote(zone)),
    h('div', { class: 'toolbar', role: 'search' }, typeSelect, eventInput, userInput, pauseButton, clearButton),
    banner,
    body,
  );

  const workspaceId = session()!.identity.workspace.workspaceId;
  if (kept?.workspaceId === workspaceId) {
    typeSelect.value = kept.filters.type;
    eventInput.value = kept.filters.event;
    userInput.value = kept.filters.userId;
  }
  let paused = false;
  let held: Event[] = [];
  /** The events on the page, newest first, at most MAX_ROWS; `ids` holds their uuids. */
  let shown: Event[] = kept?.workspaceId === workspaceId ? kept.events : [];
  let ids = new Set(shown.map((e) => e.uuid));
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
    // The stored events shown and those streamed in since the page opened: "0 received" beside
    // 500 rows read as if nothing had come.
    counter.textContent = `${formatCount(shown.length)} shown · ${formatCount(received)} arrived since opened${held.length ? ` · ${formatCount(held.length)} held while paused` : ''}`;
    counter.dataset.shown = String(shown.length);
    counter.dataset.received = String(received);
  };
  const row = (e: Event) => {
    const item = h(
      'li',
      {},
      h(
        'button',
        { type: 'button', class: 'live-row' },
        // Rows are in the order events were stored (a live view), so the time shown is the
        // arrival's; the event's own time, when it says another second, is in the title.
        h('time', { datetime: e.parsedAt, class: 'live-arrived', title: arrivalTitle(e, zone) }, formatTime(e.parsedAt, zone)),
        h('span', { class: `type type-${e.type}` }, e.type),
        h('span', { class: 'live-event' }, eventLabel(e)),
        h('span', { class: 'live-user' }, e.userId || e.anonymousId || ''),
        h('span', { class: 'live-summary' }, summary(e)),
      ),
    );
    item.firstElementChild!.addEventListener('click', () => showEvent(e));
    return item;
  };
  /** New events (oldest first, as they arrive) go on top; the oldest leave the bottom. */
  const show = (events: Event[]) => {
    const fresh = events.filter((e) => !ids.has(e.uuid));
    if (fresh.length === 0) return;
    empty.hidden = true;
    const fragment = document.createDocumentFragment();
    for (let i = fresh.length - 1; i >= 0; i--) {
      fragment.append(row(fresh[i]!));
      shown.unshift(fresh[i]!);
      ids.add(fresh[i]!.uuid);
    }
    list.prepend(fragment);
    while (shown.length > MAX_ROWS) {
      ids.delete(shown.pop()!.uuid);
      list.lastElementChild?.remove();
    }
  };
  /** Draws `events` (newest first) in place of the list. */
  const showAll = (events: Event[]) => {
    shown = events.slice(0, MAX_ROWS);
    ids = new Set(shown.map((e) => e.uuid));
    list.replaceChildren(...shown.map(row));
    empty.hidden = shown.length > 0;
    updateCounter();
  };
  /**
   * The last stored events, read when the stream opens: those the stream brought meanwhile stay
   * on top, and what was kept from an earlier visit is replaced by the stored truth.
   */
  const backfill = async (signal: AbortSignal, streamed: Event[]) => {
    try {
      const page = await api<Page<Event>>('GET', `/events?${backfillQuery(filters())}`, undefined, signal);
      if (signal.aborted) return;
      const seen = new Set<string>();
      const merged = [...streamed.toReversed(), ...page.results].filter((e) => !seen.has(e.uuid) && seen.add(e.uuid));
      showAll(merged);
    } catch (err) {
      if (!signal.aborted) banner.replaceChildren(notice('error', 'The last events could not be read', describeError(err)));
    }
  };

  const filters = (): Required<StreamFilters> => ({ type: typeSelect.value, event: eventInput.value.trim(), userId: userInput.value.trim() });

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
    const signal = controller.signal;
    /** Events the stream brought before the backfill came back, oldest first. */
    const streamed: Event[] = [];
    let backfilled = false;
    setStatus('connecting', 'Connecting…');
    readEventStream(
      current,
      filters(),
      {
        onOpen: () => {
          retry = 0;
          banner.replaceChildren();
          setStatus(paused ? 'paused' : 'live', paused ? 'Paused' : 'Live');
          // Opened first, read second: an event stored in between is in one or both, never lost.
          void backfill(signal, streamed).finally(() => (backfilled = true));
        },
        onEvent: (e) => {
          received++;
          if (!backfilled) streamed.push(e);
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
      showAll([]);
      held = [];
      connect();
    }, FILTER_DEBOUNCE_MS);
  };
  pauseButton.addEventListener('click', togglePause);
  clearButton.addEventListener('click', () => showAll([]));
  typeSelect.addEventListener('change', restart);
  eventInput.addEventListener('input', restart);
  userInput.addEventListener('input', restart);
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'p' && !typingIn(e.target) && !e.ctrlKey && !e.metaKey && !document.querySelector('dialog[open]')) togglePause();
  };
  addEventListener('keydown', onKey);
  updateCounter();
  showAll(shown);
  connect();
  return () => {
    kept = { workspaceId, filters: filters(), events: [...held.toReversed(), ...shown].slice(0, MAX_ROWS) };
    stopped = true;
    controller?.abort();
    clearTimeout(retryTimer);
    clearTimeout(debounce);
    removeEventListener('keydown', onKey);
  };
}
