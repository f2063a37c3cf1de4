import { h } from '../../dom';
import type { Group } from '../../types';
import { hashOf } from '../../ui/hash';

export const groupHref = (groupId: string) => hashOf('groups', [groupId]);

/** A group's `name` trait, else its id. */
export function groupName(g: Pick<Group, 'groupId' | 'traits'>): string {
  const name = g.traits.name;
  return typeof name === 'string' && name ? name : g.groupId;
}

/**
 * A breakdown value as an insight shows it: a link to the group's page when the breakdown is by
 * `groupId` (its values are groups), else `text`.
 */
export function breakdownValueNode(breakdown: { property: string } | undefined, value: string | undefined, text: string): Node | string {
  if (breakdown?.property !== 'groupId' || !value || value === '$other') return text;
  return h('a', { href: groupHref(value), class: 'group-link', title: `The group ${value}` }, text);
}
