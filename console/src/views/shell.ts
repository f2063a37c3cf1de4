import { h, typingIn } from '../dom';
import { session, signOut } from '../session';
import { explorerView } from './explorer';
import { liveView } from './live';
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
  { path: 'explorer', label: 'Explorer', view: explorerView },
  { path: 'sql', label: 'SQL', view: sqlView },
  { path: 'webhooks', label: 'Webhooks', view: webhooksView },
  { path: 'workspaces', label: 'Workspaces', view: workspacesView, adminOnly: true },
];

/**
 * The signed-in console: navigation, the workspace and key kind, sign-out, and the page named by
 * the URL's fragment (`#/sql`). Keys 1-5 switch pages when no field has focus.
 */
export function shell(root: HTMLElement): () => void {
  const current = session()!;
  const routes = ROUTES.filter((r) => !r.adminOnly || current.identity.kind === 'admin');
  const main = h('main', { class: 'content', id: 'content', tabindex: -1 });
  const links = routes.map((r, i) => h('a', { href: `#/${r.path}`, class: 'nav-link', 'data-path': r.path, 'aria-keyshortcuts': String(i + 1) }, h('span', {}, r.label), h('kbd', {}, String(i + 1))));
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
          h('div', { class: 'workspace-name' }, h('span', { class: 'muted' }, 'Workspace'), h('strong', {}, workspace.name), h('code', { class: 'muted' }, workspace.databaseName)),
          h('span', { class: `badge badge-${kind}` }, kind === 'admin' ? 'admin key' : 'private key'),
          signOutButton,
        ),
        main,
      ),
    ),
  );

  let stop: (() => void) | void;
  const show = () => {
    const path = location.hash.replace(/^#\/?/, '');
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
    const route = routes[Number(e.key) - 1];
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
