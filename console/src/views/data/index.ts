import './data.css';
import { h } from '../../dom';
import { currentRoute, hashOf } from '../../ui/hash';
import { type CatalogKind, catalogList } from './catalog';

const TABS: Array<{ path: CatalogKind; label: string }> = [
  { path: 'events', label: 'Events' },
  { path: 'properties', label: 'Properties' },
];

/** `#/data/<tab>`: the workspace's data management: its catalog of events and properties. */
export function dataView(root: HTMLElement): () => void {
  const route = currentRoute();
  const tab = TABS.find((t) => t.path === route.rest[0]) ?? TABS[0]!;
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Data management')),
    h(
      'div',
      { class: 'tabs data-tabs', role: 'navigation', 'aria-label': 'Data management' },
      ...TABS.map((t) => h('a', { href: hashOf('data', [t.path]), class: t === tab ? 'tab active' : 'tab', 'aria-current': t === tab ? 'page' : null }, t.label)),
    ),
  );
  const body = h('section', {});
  root.append(body);
  return catalogList(body, tab.path, route.params);
}
