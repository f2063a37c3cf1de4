import { FormatRegistry, Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { normalizeOrigin, ORIGIN_RULE } from '../http/origins';
import { Page, PageParams } from '../http/pagination';
import { IDENTIFIER_PATTERN } from '../storage/storage';
import { DATABASE_NAME_RULE } from './database-names';

const Properties = t.Record(t.String(), t.Unknown(), { error: 'must be a JSON object' });

FormatRegistry.Set('allowed-origin', (value) => value === '*' || normalizeOrigin(value) !== undefined);

/** Most origins one workspace may list. */
const MAX_ALLOWED_ORIGINS = 100;

/** Any origin: the default, so that a new workspace's public key works from every page. */
export const ANY_ORIGIN = ['*'];

const AllowedOrigins = t.Array(t.String({ format: 'allowed-origin', error: `must be * or ${ORIGIN_RULE}` }), {
  maxItems: MAX_ALLOWED_ORIGINS,
  error: `must be an array of at most ${MAX_ALLOWED_ORIGINS} origins`,
  description:
    "Pages that may send with this workspace's public keys, by origin (`https://www.example.com`); `*` for any. A request whose `Origin` is not listed gets 403 and nothing is stored. Requests without `Origin` (servers, apps) are not affected.",
  examples: [['https://www.example.com', 'https://app.example.com']],
});

/** Most site domains one workspace may list. */
const MAX_SITE_DOMAINS = 100;
/** A host name as Plausible's `domain` names a site: letters, digits and hyphens in dot-separated labels. */
const SITE_DOMAIN_PATTERN = '^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';

const SiteDomains = t.Array(t.String({ pattern: SITE_DOMAIN_PATTERN, error: 'must be a host name such as example.com (no scheme, port or path)' }), {
  maxItems: MAX_SITE_DOMAINS,
  error: `must be an array of at most ${MAX_SITE_DOMAINS} host names`,
  description:
    "Sites whose Plausible events (`POST /api/event`, by their `domain`) this workspace takes, lowercased; each belongs to one workspace at most. Plausible's trackers send no key: an event of a domain no workspace lists is answered 202 and dropped.",
  examples: [['example.com', 'shop.example.com']],
});

/** A century: far beyond any retention policy, and within what the engine's intervals hold. */
export const MAX_RETENTION_DAYS = 36_500;
// TypeBox's own Integer: Elysia's t.Integer would also take numeric strings such as "30".
const RetentionDays = Type.Integer({
  minimum: 0,
  maximum: MAX_RETENTION_DAYS,
  error: `must be a whole number of days from 0 (keep forever) to ${MAX_RETENTION_DAYS}`,
  description: 'Days events are kept, by their timestamp; 0 keeps them forever. POST: RETENTION_DAYS when absent; PUT: unchanged when absent.',
});

/** The time zone of a workspace that names none, and of those made before workspaces had one. */
export const DEFAULT_TIMEZONE = 'UTC';
export const TIMEZONE_RULE = 'must be an IANA time zone name, such as Europe/Paris or UTC';
const TIMEZONE_DESCRIPTION =
  "An IANA time zone name: where the workspace's days, weeks (from Monday) and months start in the Stats API, the web overview, and insights whose request names no `timezone`. Default UTC.";
// The shape only; whether the name is a time zone both the engine and the runtime know is checked
// by the workspace store, with the same message at the same pointer.
const Timezone = t.String({ pattern: '^[A-Za-z0-9_+\\-/]{1,64}$', error: TIMEZONE_RULE, description: TIMEZONE_DESCRIPTION, examples: ['America/New_York'] });

export const Workspace = t.Object({
  workspaceId: t.String({ format: 'uuid' }),
  name: t.String(),
  isDefault: t.Boolean(),
  databaseName: t.String(),
  createdAt: t.String({ format: 'date-time' }),
  properties: t.Optional(Properties),
  allowedOrigins: AllowedOrigins,
  siteDomains: SiteDomains,
  retentionDays: t.Integer({ minimum: 0, description: 'Days events are kept, by their timestamp; 0 keeps them forever.' }),
  timezone: t.String({ description: TIMEZONE_DESCRIPTION }),
});
export type Workspace = typeof Workspace.static;

/** `CreateWorkspaceDto`: the body of POST and PUT. */
export const WorkspaceInput = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', error: 'must be a non-blank string of at most 200 characters' }),
    databaseName: t.Optional(t.String({ pattern: IDENTIFIER_PATTERN, error: DATABASE_NAME_RULE, examples: ['ws_acme'] })),
    isDefault: t.Optional(t.Boolean({ error: 'must be true or false' })),
    properties: t.Optional(Properties),
    allowedOrigins: t.Optional(AllowedOrigins),
    siteDomains: t.Optional(SiteDomains),
    retentionDays: t.Optional(RetentionDays),
    timezone: t.Optional(Timezone),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Acme', databaseName: 'ws_acme', properties: { plan: 'enterprise' }, allowedOrigins: ['https://www.acme.example'], siteDomains: ['acme.example'], retentionDays: 90, timezone: 'America/New_York' }],
  },
);
export type WorkspaceInput = typeof WorkspaceInput.static;

/** A new workspace with its keys, which are shown this once and stored only as hashes. */
export const CreatedWorkspace = t.Composite([Workspace, t.Object({ publicApiKey: t.String(), privateApiKey: t.String() })]);
export type CreatedWorkspace = typeof CreatedWorkspace.static;

const RotatableKind = t.Union([t.Literal('public'), t.Literal('private')], { error: 'must be "public" or "private"' });

/** The body of `POST /workspaces/{workspaceId}/keys`: which of the workspace's keys to replace. */
export const KeyRotationInput = t.Object(
  { kind: RotatableKind },
  { additionalProperties: false, examples: [{ kind: 'private' }] },
);
export type KeyRotationInput = typeof KeyRotationInput.static;

/** A workspace's new key, shown this once and stored only as a hash; the old ones of its kind are revoked. */
export const RotatedKey = t.Object({
  workspaceId: t.String({ format: 'uuid' }),
  kind: RotatableKind,
  apiKey: t.String({ description: 'The new key (`pk_…` or `sk_…`), shown this once: only its SHA-256 is stored.' }),
  createdAt: t.String({ format: 'date-time' }),
  revokedKeys: t.Integer({
    minimum: 0,
    description: "How many of the workspace's keys of this kind were revoked: they answer 401 from now on. The environment's keys (the default workspace's) are never among them.",
  }),
});
export type RotatedKey = typeof RotatedKey.static;

export const WorkspacesPage = Page(Workspace);

export const WorkspaceIdParams = t.Object({ workspaceId: t.String() });

export const ListWorkspacesQuery = t.Object(PageParams, { additionalProperties: false });

/** What `GET /whoami` answers: the kind of the key sent, and its workspace. */
export const KeyIdentity = t.Object({
  kind: t.Union([t.Literal('private'), t.Literal('admin')], { description: 'admin keys may also manage workspaces' }),
  workspace: Workspace,
});
export type KeyIdentity = typeof KeyIdentity.static;
