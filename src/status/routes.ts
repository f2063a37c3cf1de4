import { Elysia } from 'elysia';
import pkg from '../../package.json' with { type: 'json' };

/** `GET /`: who we are and which storage runs, without a key. */
export function statusRoutes(storageMode: 'embedded' | 'server') {
  return new Elysia({ name: 'status' }).get('/', () => ({ service: pkg.name, version: pkg.version, storage: storageMode, status: 'ok' }));
}
