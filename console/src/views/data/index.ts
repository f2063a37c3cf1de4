import './data.css';
import { h } from '../../dom';
import { currentRoute, hashOf } from '../../ui/hash';
import { catalogList } from './catalog';
import { planView } from './plan';
import { violationsView } from './violations';

const TABS: Array<{ path: string; label: string; view: (root: HTMLElement, params: URLSearchParams) => () => void }> = [
  { path: 'events', label: 'Events', view: (root, params) => catalogList(root, 'events', params) },
  { path: 'properties', label: 'Properties', view: (root, params) => catalogList(root, 'properties', params) },
  { path: 'plan', label: 'Tracking plan', view: planView },
  { path: 'violations', label: 'Violations', view: violationsView },
];

/** `#/data/<tab>`: the workspace's data management: its catalog, its tracking plan and what breaks it. */
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
  return tab.view(body, route.params);
}
