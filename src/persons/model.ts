import { literalUnion } from '../events/model';
import { t } from 'elysia';
import { Page, PageParams } from '../http/pagination';

const Traits = t.Record(t.String(), t.Unknown(), { description: 'The latest value of each trait, from identify (persons) or group (groups) calls.' });

export const Person = t.Object({
  personId: t.String({ description: 'The userId the person is known by, or the anonymousId of a person never identified.' }),
  userId: t.Optional(t.String({ description: 'Absent for a person never identified.' })),
  userIds: t.Array(t.String(), { description: 'Every userId of the person: its own, and those renamed to it by alias calls.' }),
  anonymousIds: t.Array(t.String(), { description: 'Every anonymousId its events carry.' }),
  traits: Traits,
  firstSeen: t.String({ format: 'date-time' }),
  lastSeen: t.String({ format: 'date-time' }),
  eventCount: t.Number(),
  firstTouch: t.Record(t.String(), t.String(), {
    description: "The person's first touch, from their first event: `$initial_referrer`, `$initial_source`, `$initial_utm_source`, ... ('' where that event had none).",
  }),
});
export type Person = typeof Person.static;

export const PersonsPage = Page(Person);

export const ListPersonsQuery = t.Object(
  {
    ...PageParams,
    search: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Text found in an id or in the traits (any case).' })),
    cohort: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'Only members of this cohort.' })),
    filters: t.Optional(t.String({ maxLength: 20_000, description: 'A JSON list of filters (docs/api/filters.md); person properties by default.' })),
    includeBots: t.Optional(literalUnion(['true', 'false'], 'Whether persons all of whose events are automated (`context.bot`: crawlers, headless browsers) are listed. Default false.')),
  },
  { additionalProperties: false },
);
export type ListPersonsQuery = typeof ListPersonsQuery.static;

export const PersonIdParams = t.Object({ personId: t.String({ minLength: 1, maxLength: 1000 }) });
export const PersonEventsQuery = t.Object(PageParams, { additionalProperties: false });

export const Group = t.Object({
  groupId: t.String(),
  traits: Traits,
  firstSeen: t.String({ format: 'date-time' }),
  lastSeen: t.String({ format: 'date-time' }),
  eventCount: t.Number(),
  personCount: t.Number({ description: 'Persons whose events carry the groupId.' }),
});
export type Group = typeof Group.static;
export const GroupIdParams = t.Object({ groupId: t.String({ minLength: 1, maxLength: 1000 }) });

export const GroupsPage = Page(Group);

export const ListGroupsQuery = t.Object(
  {
    ...PageParams,
    search: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Text found in the groupId or in the traits (any case).' })),
    personId: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: "Only the groups this person's events carry (a person's companies)." })),
  },
  { additionalProperties: false },
);
export type ListGroupsQuery = typeof ListGroupsQuery.static;
