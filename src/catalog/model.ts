import { Type, type TLiteral } from '@sinclair/typebox';
import { t } from 'elysia';
import { Page, PageParams } from '../http/pagination';
import { PROPERTY_KINDS, type PropertyKind } from './observations';

/** Lengths of the curated fields. */
export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 2000;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;
export const MAX_OWNER_LENGTH = 200;

// A union of literals without a default: Elysia would fill a missing t.UnionEnum with its first value.
const Literals = <T extends string>(values: readonly T[], options: { error: string; description: string }) =>
  Type.Union(values.map((value) => Type.Literal(value)) as [TLiteral<T>], options);

const Source = Literals<PropertyKind>(PROPERTY_KINDS, {
  error: `must be one of ${PROPERTY_KINDS.join(', ')}`,
  description: 'The object the property is a key of: `properties` (the default), `traits` or `context`. Nested keys are joined with dots (`page.path` of `context`).',
});
const Flag = t.Union([t.Literal('true'), t.Literal('false')], { error: 'must be true or false' });
const Day = t.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date', error: 'must be a day as YYYY-MM-DD' });

const ListFilters = {
  ...PageParams,
  search: t.Optional(t.String({ maxLength: MAX_NAME_LENGTH, error: `must be at most ${MAX_NAME_LENGTH} characters`, description: 'Only names containing this text (any case).' })),
  hidden: t.Optional(Flag),
  dateFrom: t.Optional(Day),
  dateTo: t.Optional(Day),
};

export const EventListQuery = t.Object(ListFilters, { additionalProperties: false });
export const PropertyListQuery = t.Object(
  {
    ...ListFilters,
    event: t.Optional(t.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, error: `must be an event name of 1 to ${MAX_NAME_LENGTH} characters`, description: 'Only properties seen on this event (`$pageview` for page views).' })),
    source: t.Optional(Source),
  },
  { additionalProperties: false },
);

export const NameParams = t.Object({ name: t.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, error: `must be a name of 1 to ${MAX_NAME_LENGTH} characters` }) });
export const PropertyPatchQuery = t.Object({ source: t.Optional(Source) }, { additionalProperties: false });

const Curated = {
  description: t.String({ maxLength: MAX_DESCRIPTION_LENGTH, error: `must be text of at most ${MAX_DESCRIPTION_LENGTH} characters` }),
  tags: t.Array(t.String({ minLength: 1, maxLength: MAX_TAG_LENGTH, pattern: '\\S', error: `must be a non-blank tag of at most ${MAX_TAG_LENGTH} characters` }), {
    maxItems: MAX_TAGS,
    uniqueItems: true,
    error: `must be at most ${MAX_TAGS} distinct tags`,
  }),
  owner: t.String({ maxLength: MAX_OWNER_LENGTH, error: `must be text of at most ${MAX_OWNER_LENGTH} characters`, description: 'Who answers for it: a person or a team, as you name them.' }),
  verified: t.Boolean({ error: 'must be true or false' }),
  hidden: t.Boolean({ error: 'must be true or false', description: 'Hidden ones are left out of pickers; the API still lists them unless `hidden=false`.' }),
};
const DisplayName = t.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '\\S', error: `must be a non-blank name of at most ${MAX_NAME_LENGTH} characters` });

const atLeastOne = { additionalProperties: false, minProperties: 1, error: 'must be an object with at least one curated field' };
export const EventPatch = t.Object(
  {
    displayName: t.Optional(t.Union([DisplayName, t.Null()], { error: `must be a non-blank name of at most ${MAX_NAME_LENGTH} characters, or null` })),
    ...Object.fromEntries(Object.entries(Curated).map(([k, v]) => [k, t.Optional(v)])),
  },
  atLeastOne,
);
export const PropertyPatch = t.Object(Object.fromEntries(Object.entries(Curated).map(([k, v]) => [k, t.Optional(v)])), atLeastOne);
export type CuratedPatch = { displayName?: string | null; description?: string; tags?: string[]; owner?: string; verified?: boolean; hidden?: boolean };

const TypeCount = t.Object({ type: t.String(), count: t.Number() });
const Observed = {
  name: t.String(),
  types: t.Array(TypeCount, { description: 'Observed types (an event: `track`, `page`, ...; a property: `string`, `number`, `boolean`, `null`, `array`, `object`), most seen first.' }),
  volume: t.Number({ description: 'Events seen (in the range, with dateFrom/dateTo).' }),
  firstSeen: t.String({ format: 'date-time' }),
  lastSeen: t.String({ format: 'date-time' }),
  examples: t.Array(t.String(), { description: 'A few distinct values, as JSON text (short scalars only).' }),
  libraries: t.Array(t.String(), { description: "The SDKs that sent it (`context.library.name`, '' for none)." }),
  description: t.String(),
  tags: t.Array(t.String()),
  owner: t.String(),
  verified: t.Boolean(),
  hidden: t.Boolean(),
};
export const CatalogEvent = t.Object({ ...Observed, displayName: t.Union([t.String(), t.Null()]) });
export const CatalogProperty = t.Object({ ...Observed, source: t.String(), events: t.Array(t.String(), { description: 'The events it was seen on.' }) });
export type CatalogEvent = typeof CatalogEvent.static;
export type CatalogProperty = typeof CatalogProperty.static;
export const CatalogEventsPage = Page(CatalogEvent);
export const CatalogPropertiesPage = Page(CatalogProperty);
