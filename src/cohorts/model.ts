import { t } from 'elysia';
import { PropertyFilter } from '../filters/model';
import { Page, PageParams } from '../http/pagination';

/** Longest window of a behavioural filter, in days. */
export const MAX_WITHIN_DAYS = 3650;

export const PerformedFilter = t.Object(
  {
    performed: t.String({ minLength: 1, maxLength: 200, description: 'An event name.' }),
    atLeast: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000, description: 'Times at least (default 1).' })),
    withinDays: t.Integer({ minimum: 1, maximum: MAX_WITHIN_DAYS, description: 'Within the last this many days (24-hour periods back from now).' }),
  },
  { additionalProperties: false },
);
export type PerformedFilter = typeof PerformedFilter.static;

export const CohortFilter = t.Union([PropertyFilter, PerformedFilter], {
  error: 'must be a person property filter { property, operator, value? } or a behavioural one { performed, atLeast?, withinDays }',
});
export type CohortFilter = typeof CohortFilter.static;

export const CohortInput = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    filters: t.Array(CohortFilter, { minItems: 1, maxItems: 30, error: 'must be a list of 1 to 30 filters' }),
    includeBots: t.Optional(t.Boolean({ description: 'Whether automated clients (`context.bot`: crawlers, headless browsers) may be members and their events count. Default false.' })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Pro buyers',
        filters: [
          { property: 'plan', source: 'person', operator: 'eq', value: 'pro' },
          { performed: 'purchase', atLeast: 2, withinDays: 30 },
        ],
      },
    ],
  },
);
export type CohortInput = typeof CohortInput.static;

export const Cohort = t.Object({
  id: t.String(),
  name: t.String(),
  filters: t.Array(CohortFilter),
  includeBots: t.Boolean(),
  createdAt: t.String(),
  updatedAt: t.String(),
  size: t.Number({ description: 'Persons in the cohort now.' }),
});
export type Cohort = typeof Cohort.static;

export const CohortsPage = Page(Cohort);
export const ListCohortsQuery = t.Object(PageParams, { additionalProperties: false });
export const CohortIdParams = t.Object({ cohortId: t.String() });
