import { t } from 'elysia';

export const Workspace = t.Object({
  workspaceId: t.String(),
  name: t.String(),
  isDefault: t.Boolean(),
  databaseName: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  properties: t.Optional(t.Record(t.String(), t.Unknown())),
});
export type Workspace = typeof Workspace.static;
