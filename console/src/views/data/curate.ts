import { api } from '../../api';
import { h } from '../../dom';
import { openDialog } from '../../ui/dialog';
import { type CatalogItem, isProperty } from './types';

/** The path of an item's PATCH: a property is named with its source. */
export function itemPath(item: CatalogItem): string {
  return isProperty(item)
    ? `/catalog/properties/${encodeURIComponent(item.name)}?source=${item.source}`
    : `/catalog/events/${encodeURIComponent(item.name)}`;
}

/**
 * The curated fields of an event or property, edited in a dialog and saved with one PATCH of what
 * changed. Resolves with the item as the API answers it after the save, or undefined when nothing
 * was saved.
 */
export async function curate(item: CatalogItem): Promise<CatalogItem | undefined> {
  const displayName = isProperty(item) ? undefined : h('input', { type: 'text', name: 'displayName', value: item.displayName ?? '', maxlength: 200, autocomplete: 'off' });
  const description = h('textarea', { name: 'description', rows: 3, maxlength: 2000 }, item.description);
  const tags = h('input', { type: 'text', name: 'tags', value: item.tags.join(', '), placeholder: 'checkout, marketing', autocomplete: 'off' });
  const owner = h('input', { type: 'text', name: 'owner', value: item.owner, maxlength: 200, placeholder: 'growth@example.com', autocomplete: 'off' });
  const verified = h('input', { type: 'checkbox', name: 'verified', checked: item.verified });
  const hidden = h('input', { type: 'checkbox', name: 'hidden', checked: item.hidden });
  const body = h(
    'div',
    { class: 'curate-form' },
    displayName ? h('label', { class: 'field wide' }, h('span', {}, 'Display name'), displayName) : null,
    h('label', { class: 'field wide' }, h('span', {}, 'Description'), description),
    h('label', { class: 'field wide' }, h('span', {}, 'Tags (comma-separated)'), tags),
    h('label', { class: 'field wide' }, h('span', {}, 'Owner'), owner),
    h('div', { class: 'checks' }, h('label', { class: 'check' }, verified, 'Verified'), h('label', { class: 'check' }, hidden, 'Hidden from pickers')),
  );
  const title = `${isProperty(item) ? 'Property' : 'Event'} ${item.name}`;
  if ((await openDialog(title, body, [{ label: 'Cancel', value: '' }, { label: 'Save', value: 'save', kind: 'primary' }])) !== 'save') return undefined;
  const tagList = [...new Set(tags.value.split(',').map((t) => t.trim()).filter(Boolean))];
  const patch: Record<string, unknown> = {};
  if (displayName && displayName.value.trim() !== (item.displayName ?? '')) patch.displayName = displayName.value.trim() || null;
  if (description.value !== item.description) patch.description = description.value;
  if (tagList.join('\n') !== item.tags.join('\n')) patch.tags = tagList;
  if (owner.value.trim() !== item.owner) patch.owner = owner.value.trim();
  if (verified.checked !== item.verified) patch.verified = verified.checked;
  if (hidden.checked !== item.hidden) patch.hidden = hidden.checked;
  if (Object.keys(patch).length === 0) return undefined;
  return api<CatalogItem>('PATCH', itemPath(item), patch);
}
