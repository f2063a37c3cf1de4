import { h } from '../../dom';
import type { Person } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { hashOf } from '../../ui/hash';
import { countryText } from './first-touch';

export const personHref = (personId: string) => hashOf('persons', [personId]);

/** The traits people are most often told apart by, first found. */
export function displayName(p: Pick<Person, 'traits'>): string {
  for (const key of ['email', 'name', 'username', 'firstName']) {
    const value = p.traits[key];
    if (typeof value === 'string' && value) return value;
  }
  return '';
}

const muted = (text: string) => h('span', { class: 'muted' }, text);

/**
 * Persons as a table: the id (a link to their page), a name or email, where they first came from
 * (first touch: country and source), their plan (the `plan` trait), first and last seen, events.
 */
export function personsTable(persons: readonly Person[]): HTMLElement {
  const columns: Array<[string, string | null]> = [['Person', null], ['Name or email', null], ['Country', 'hide-narrow'], ['Source', 'hide-narrow'], ['Plan', null], ['First seen', 'hide-narrow'], ['Last seen', null], ['Events', 'num']];
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'data-table persons-table' },
      h('thead', {}, h('tr', {}, ...columns.map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
      h(
        'tbody',
        {},
        ...persons.map((p) => {
          const country = p.firstTouch.$initial_country ?? '';
          const plan = p.traits.plan;
          return h(
            'tr',
            { 'data-person': p.personId },
            h('td', { class: 'wrap' }, h('a', { href: personHref(p.personId), class: 'strong-link' }, p.personId)),
            h('td', { class: 'wrap', 'data-field': 'name' }, displayName(p) || muted(p.userId ? '—' : 'anonymous')),
            h('td', { class: 'hide-narrow', 'data-field': 'country', title: country }, country ? countryText(country) : muted('—')),
            // No source: the first event came with no referrer nor UTM tags (Plausible's wording).
            h('td', { class: 'hide-narrow', 'data-field': 'source' }, p.firstTouch.$initial_source || muted('Direct / None')),
            h('td', { 'data-field': 'plan' }, plan === undefined || plan === null || plan === '' ? muted('—') : String(plan)),
            h('td', { class: 'hide-narrow' }, formatTime(p.firstSeen)),
            h('td', {}, formatTime(p.lastSeen)),
            h('td', { class: 'num' }, formatCount(p.eventCount)),
          );
        }),
      ),
    ),
  );
}
