import { t } from 'elysia';

export const Backup = t.Object({
  id: t.String({ description: "The engine's id of the backup." }),
  path: t.String({ description: 'Where it is written: a directory, restored with npm run restore.' }),
  databases: t.Array(t.String(), { description: 'The metadata database and every workspace database.' }),
  status: t.String({ description: 'running, finished or failed' }),
  error: t.Optional(t.String()),
  files: t.Integer(),
  bytes: t.Integer(),
  startedAt: t.String({ format: 'date-time' }),
  finishedAt: t.Optional(t.String({ format: 'date-time' })),
});
export type Backup = typeof Backup.static;

export const BackupIdParams = t.Object({ id: t.String() });
