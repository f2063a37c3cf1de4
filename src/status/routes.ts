import { Elysia, t } from 'elysia';
import pkg from '../../package.json' with { type: 'json' };

/** `GET /`: who we are and which storage runs, without a key. */
export function statusRoutes(storageMode: 'embedded' | 'server') {
  return new Elysia({ name: 'status' }).get('/', () => ({ service: pkg.name, version: pkg.version, storage: storageMode, status: 'ok' as const }), {
    response: {
      200: t.Object(
        { service: t.String(), version: t.String(), storage: t.Union([t.Literal('embedded'), t.Literal('server')]), status: t.Literal('ok') },
        { examples: [{ service: 'event-analytics', version: '0.2.0', storage: 'embedded', status: 'ok' }] },
      ),
    },
    detail: { tags: ['Operations'], summary: 'Status', description: 'No key needed.', security: [] },
  });
}
