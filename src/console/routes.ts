import { Elysia } from 'elysia';
import { notFound } from '../http/problem';
import type { ConsoleAssets } from './assets';

/** Where the console is served; `GET /` stays the health check. */
const CONSOLE_PATH = '/console';

/**
 * The web console: one page (its views are addressed by the URL's fragment, `#/sql`) and its
 * hashed files. It needs no key to load; it asks for one and calls the public API with it.
 */
export function consoleRoutes(assets: ConsoleAssets) {
  const page = ({ request }: { request: Request }) => assets.page('console', request.headers.get('accept-encoding'));
  const hidden = { detail: { hide: true } };
  return new Elysia({ name: 'console' })
    .get(CONSOLE_PATH, page, hidden)
    .get(`${CONSOLE_PATH}/`, page, hidden)
    .get(
      `${CONSOLE_PATH}/assets/:name`,
      ({ params, request }) => {
        const answer = assets.asset(params.name, request.headers.get('accept-encoding'));
        if (!answer) throw notFound(`no console file ${params.name}`);
        return answer;
      },
      hidden,
    );
}
