import { api, describeError } from '../../api';
import { h } from '../../dom';
import { openDialog } from '../../ui/dialog';
import { notice } from '../../ui/notice';
import { groupHref } from '../groups/links';
import { personHref } from '../persons/table';
import { formatNumber } from './format';
import type { AnyQuery, Kind } from './types';

/** The persons behind a point as POST /insights/<kind>/persons answers them. */
interface ActorsPage {
  results: Array<{ personId?: string; groupId?: string; name?: string; email?: string; eventCount?: number }>;
  total: number;
  next?: number;
}

/** Persons asked for a page. */
const PAGE_SIZE = 100;

/**
 * Opens a dialog listing the persons (or groups) behind one point of an insight: `query` is the
 * request its answer came from, `selector` the point (docs/api/insights.md#persons-behind-a-point).
 * Each person (or group) links to their page, their name or email beside the id; the dialog
 * closes as one is opened.
 */
export function showActors(kind: Exclude<Kind, 'paths'>, query: AnyQuery, selector: Record<string, unknown>, title: string): void {
  const status = h('p', { class: 'muted actors-status', role: 'status' }, 'Loading…');
  const list = h('ul', { class: 'actors-list' });
  const more = h('button', { type: 'button', class: 'secondary small', hidden: true }, 'Show more');
  const body = h('div', { class: 'actors' }, status, list, more);
  let offset = 0;

  const load = async () => {
    more.disabled = true;
    try {
      const page = await api<ActorsPage>('POST', `/insights/${kind}/persons`, { query, ...selector, limit: PAGE_SIZE, offset });
      const noun = page.results[0]?.groupId !== undefined ? 'group' : 'person';
      status.textContent = `${formatNumber(page.total)} ${noun}${page.total === 1 ? '' : 's'}`;
      list.append(...page.results.map((actor) => h('li', { 'data-actor': actor.personId ?? actor.groupId ?? '' }, actorEntry(actor))));
      offset = page.next ?? offset;
      more.hidden = page.next === undefined;
    } catch (err) {
      status.replaceWith(notice('error', 'The persons could not be listed', describeError(err)));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => void load());
  // Opening a person leaves the insight: the dialog goes with it.
  list.addEventListener('click', (e) => {
    if ((e.target as Element).closest('a')) body.closest('dialog')?.close();
  });
  void openDialog(title, body);
  void load();
}

function actorEntry(actor: ActorsPage['results'][number]): Node {
  const events = actor.eventCount === undefined ? null : h('span', { class: 'muted' }, `${formatNumber(actor.eventCount)} event${actor.eventCount === 1 ? '' : 's'}`);
  const id = actor.personId ?? actor.groupId ?? '';
  const link = h('a', { href: actor.personId !== undefined ? personHref(id) : groupHref(id), class: 'strong-link' }, id);
  const names = [actor.name, actor.email].filter(Boolean).join(' · ');
  return h('span', { class: 'actor' }, link, names ? h('span', { class: 'actor-name', title: names }, names) : null, events);
}
