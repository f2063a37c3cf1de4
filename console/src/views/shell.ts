import { h, typingIn } from '../dom';
import { session, signOut } from '../session';
import { pageOf } from '../ui/hash';
import { workspaceSwitcher } from '../ui/workspace-switcher';
import { cohortsView } from './cohorts/cohorts';
import { dashboardsView } from './dashboards/dashboards';
import { dataView } from './data/index';
import { savedInsightsView } from './dashboards/saved-insights';
import { explorerView } from './explorer';
import { groupsView } from './groups/groups';
import { insightsView } from './insights/index';
import { liveView } from './live';
import { overviewView } from './overview/index';
import { personsView } from './persons/persons';
import { sqlView } from './sql';
import { webhooksView } from './webhooks';
import { workspacesView } from './workspaces';

/** A page of the console: draws itself into `root` and returns what stops it (streams, timers). */
export type View = (root: HTMLElement) => (() => void) | void;

interface Route {
  path: string;
  label: string;
  view: View;
  adminOnly?: boolean;
}

const ROUTES: Route[] = [
  { path: 'live', label: 'Live events', view: liveView },
  { path: 'overview', label: 'Overview', view: overviewView },
  { path: 'explorer', label: 'Explorer', view: explorerView },
  { path: 'sql', label: 'SQL', view: sqlView },
  { path: 'insights', label: 'Insights', view: insightsView },
  { path: 'saved', label: 'Saved insights', view: savedInsightsView },
  { path: 'dashboards', label: 'Dashboards', view: dashboardsView },
  { path: 'persons', label: 'Persons', view: personsView },
  { path: 'cohorts', label: 'Cohorts', view: cohortsView },
  { path: 'groups', label: 'Groups', view: groupsView },
  { path: 'data', label: 'Data management', view: dataView },
  { path: 'webhooks', label: 'Webhooks', view: webhooksView },
  { path: 'workspaces', label: 'Workspaces', view: workspacesView, adminOnly: true },
];

/** Pages with a number key: 1 to 9. */
const SHORTCUTS = 9;

/**
 * The signed-in console: navigation, the workspace and key kind, sign-out, and the page named by
 * the fragment's first segment (`#/sql`, `#/dashboards/<id>`: the page reads the rest). Keys 1-9
 * switch pages when no field has focus.
 */
export function shell(root: HTMLElement): () => void {
  const current = session()!;
  const routes = ROUTES.filter((r) => !r.adminOnly || current.identity.kind === 'admin');
  const main = h('main', { class: 'content', id: 'content', tabindex: -1 });
  const links = routes.map((r, i) =>
    h('a', { href: `#/${r.path}`, class: 'nav-link', 'data-path': r.path, 'aria-keyshortcuts': i < SHORTCUTS ? String(i + 1) : null }, h('span', {}, r.label), i < SHORTCUTS ? h('kbd', {}, String(i + 1)) : null),
  );
  const signOutButton = h('button', { type: 'button', class: 'secondary small' }, 'Sign out');
  signOutButton.addEventListener('click', () => signOut());
  const { workspace, kind } = current.identity;
  root.replaceChildren(
    h('a', { class: 'skip-link', href: '#content' }, 'Skip to content'),
    h(
      'div',
      { class: 'layout' },
      h(
        'aside',
        { class: 'sidebar' },
        h('div', { class: 'brand' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'Event analytics'),
        h('nav', { 'aria-label': 'Console' }, ...links),
        h('a', { class: 'nav-link nav-external', href: '/docs', target: '_blank', rel: 'noopener' }, 'API reference ↗'),
      ),
      h(
        'div',
        { class: 'main-column' },
        h(
          'header',
          { class: 'topbar' },
          h('div', { class: 'workspace-name' }, h('span', { class: 'muted' }, 'Workspace'), workspaceSwitcher() ?? h('strong', {}, workspace.name), h('code', { class: 'muted' }, workspace.databaseName)),
          h('span', { class: `badge badge-${kind}` }, kind === 'admin' ? 'admin key' : 'private key'),
          signOutButton,
        ),
        main,
      ),
    ),
  );

  let stop: (() => void) | void;
  const show = () => {
    const path = pageOf(location.hash);
    const route = routes.find((r) => r.path === path) ?? routes[0]!;
    if (route.path !== path) history.replaceState(null, '', `#/${route.path}`);
    for (const link of links) link.classList.toggle('active', link.dataset.path === route.path);
    for (const link of links) link.toggleAttribute('aria-current', link.dataset.path === route.path);
    stop?.();
    main.replaceChildren();
    document.title = `${route.label} · Event analytics`;
    stop = route.view(main);
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typingIn(e.target) || document.querySelector('dialog[open]')) return;
    const route = /^[1-9]$/.test(e.key) ? routes[Number(e.key) - 1] : undefined;
    if (route) location.hash = `#/${route.path}`;
  };
  addEventListener('hashchange', show);
  addEventListener('keydown', onKey);
  show();
  return () => {
    stop?.();
    removeEventListener('hashchange', show);
    removeEventListener('keydown', onKey);
  };
}
