import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import type { BackupRunner } from './backup-runner';
import { Backup, BackupIdParams } from './model';

/** `/backups`: backups of the embedded engine's data, for an admin key. */
export function backupRoutes(store: WorkspaceStore, runner: BackupRunner) {
  return new Elysia({ name: 'backups', normalize: false })
    .use(auth(store))
    .post(
      '/backups',
      async ({ set }) => {
        const backup = await runner.start();
        set.status = 202;
        return backup;
      },
      {
        scope: 'admin',
        response: { 202: Backup, ...problems(401, 403, 409, 503) },
        detail: {
          tags: ['Backups'],
          summary: 'Start a backup',
          description:
            'Backs up the metadata database and every workspace database with the engine, in the background, while the service runs; 202 with its id and path. 409 on the server backend (back up the server instead).',
        },
      },
    )
    .get('/backups/:id', ({ params }) => runner.get(params.id), {
      scope: 'admin',
      params: BackupIdParams,
      response: { 200: Backup, ...problems(401, 403, 404, 503) },
      detail: { tags: ['Backups'], summary: 'Get a backup', description: 'Its status (running, finished, failed), files and bytes. Known to the process that made it.' },
    });
}
