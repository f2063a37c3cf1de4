import { swagger } from '@elysiajs/swagger';
import { Elysia } from 'elysia';
import pkg from '../../package.json' with { type: 'json' };
import type { ConsoleAssets } from '../console/assets';
import { conformOpenApi } from './openapi-document';

/** Where the interactive page and the OpenAPI document are served. */
export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/docs/json';

/**
 * The OpenAPI 3.1 document, generated from the routes' TypeBox schemas (bodies, query
 * parameters, answers and problems), and an interactive page (Scalar) over it. The generator's
 * own page loads Scalar from a CDN: it is replaced by the page built with the console, which
 * the service serves with every file it needs.
 */
export function openApi(assets: ConsoleAssets) {
  const generator = swagger({
    path: DOCS_PATH,
    specPath: OPENAPI_PATH,
    exclude: [DOCS_PATH, OPENAPI_PATH],
    documentation: {
      info: {
        title: 'Event analytics',
        version: pkg.version,
        description:
          'Collect page, track, identify and group events (and Segment calls), list them, analyse them with ClickHouse SQL, split customers into workspaces, and push events to webhooks. Errors are application/problem+json.',
      },
      tags: [
        { name: 'Events', description: 'Send, list and stream events.' },
        { name: 'Segment', description: "Segment's tracking API, for Segment's and RudderStack's SDKs." },
        { name: 'Queries', description: 'ClickHouse SQL over the workspace.' },
        { name: 'Workspaces', description: 'Tenants: a database and keys each (admin key).' },
        { name: 'Webhooks', description: 'Push matching events to your systems.' },
        { name: 'Operations', description: 'Status and metrics.' },
      ],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A public, private or admin key: `Authorization: Bearer <key>`. With an admin key, `X-Workspace-Id: <workspaceId>` makes the request act on that workspace as its private key would (404 for an unknown id, 403 with any other key).',
          },
          basic: { type: 'http', scheme: 'basic', description: 'Segment routes: the write key (a public key) as user name, empty password.' },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  // A hook applies to the routes registered after it: the generator's among them.
  return new Elysia({ name: 'openapi' })
    .onAfterHandle({ as: 'local' }, ({ path, request, responseValue }) => {
      if (path === OPENAPI_PATH) return conformOpenApi(responseValue as Record<string, unknown>);
      if (path === DOCS_PATH) return assets.page('docs', request.headers.get('accept-encoding'));
    })
    .use(generator);
}
