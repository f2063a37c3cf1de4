import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { problems } from '../http/problem';
import { KeyIdentity } from './model';
import type { WorkspaceStore } from './workspace-store';

/** `GET /whoami`: what a private or admin key opens, so a client (the console) can tell at sign-in. */
export function whoamiRoutes(store: WorkspaceStore) {
  return new Elysia({ name: 'whoami', normalize: false }).use(auth(store)).get(
    '/whoami',
    // The private scope has refused public keys already.
    ({ principal }): KeyIdentity => ({ kind: principal.kind as KeyIdentity['kind'], workspace: principal.workspace }),
    {
      scope: 'private',
      response: { 200: KeyIdentity, ...problems(401, 403) },
      detail: {
        tags: ['Workspaces'],
        summary: 'The calling key',
        description: 'The kind of the key sent (private or admin) and its workspace. A public key gets 403: it may only send events.',
      },
    },
  );
}
