import { t } from 'elysia';
import { Page, PageParams } from '../http/pagination';
import { IDENTIFIER_PATTERN } from '../storage/storage';
import { DATABASE_NAME_RULE } from './database-names';

const Properties = t.Record(t.String(), t.Unknown(), { error: 'must be a JSON object' });

export const Workspace = t.Object({
  workspaceId: t.String({ format: 'uuid' }),
  name: t.String(),
  isDefault: t.Boolean(),
  databaseName: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  properties: t.Optional(Properties),
});
export type Workspace = typeof Workspace.static;

/** `CreateWorkspaceDto`: the body of POST and PUT. */
export const WorkspaceInput = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be a non-blank string of at most 200 characters' }),
    databaseName: t.Optional(t.String({ pattern: IDENTIFIER_PATTERN, error: DATABASE_NAME_RULE, examples: ['ws_acme'] })),
    isDefault: t.Optional(t.Boolean({ error: 'must be true or false' })),
    properties: t.Optional(Properties),
  },
  { additionalProperties: false, examples: [{ name: 'Acme', databaseName: 'ws_acme', properties: { plan: 'enterprise' } }] },
);
export type WorkspaceInput = typeof WorkspaceInput.static;

/** A new workspace with its keys, which are shown this once and stored only as hashes. */
export const CreatedWorkspace = t.Composite([Workspace, t.Object({ publicApiKey: t.String(), privateApiKey: t.String() })]);
export type CreatedWorkspace = typeof CreatedWorkspace.static;

export const WorkspacesPage = Page(Workspace);

export const WorkspaceIdParams = t.Object({ workspaceId: t.String() });

export const ListWorkspacesQuery = t.Object(PageParams, { additionalProperties: false });

/** What `GET /whoami` answers: the kind of the key sent, and its workspace. */
export const KeyIdentity = t.Object({
  kind: t.Union([t.Literal('private'), t.Literal('admin')], { description: 'admin keys may also manage workspaces' }),
  workspace: Workspace,
});
export type KeyIdentity = typeof KeyIdentity.static;
