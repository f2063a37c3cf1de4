import { t } from 'elysia';

export const OPERATORS = ['eq', 'neq', 'in', 'not_in', 'contains', 'not_contains', 'regex', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set'] as const;
export type Operator = (typeof OPERATORS)[number];

/** Keys of a nested property at most (`a.b.c`). */
export const MAX_PROPERTY_DEPTH = 10;
/** Filters in one list at most: each is a condition of the statement. */
export const MAX_FILTERS = 30;

const Scalar = t.Union([t.String({ maxLength: 1000 }), t.Number(), t.Boolean()]);

export const PropertyFilter = t.Object(
  {
    property: t.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[^.]+(\\.[^.]+)*$',
      error: 'must be a property name: keys joined by dots, none empty',
    }),
    source: t.Optional(t.Union([t.Literal('event'), t.Literal('person'), t.Literal('group')], { error: 'must be event, person or group' })),
    // No default: Elysia's t.UnionEnum would fill a missing operator with its first value (eq).
    operator: t.UnionEnum(OPERATORS, { error: `must be one of ${OPERATORS.join(', ')}`, default: undefined }),
    value: t.Optional(t.Union([Scalar, t.Array(Scalar, { maxItems: 1000 })])),
  },
  { additionalProperties: false },
);
export type PropertyFilter = typeof PropertyFilter.static;

export const CohortFilter = t.Object({ cohort: t.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export type CohortFilter = typeof CohortFilter.static;

/** A filter of a list, all of which must hold: on a property of the event, person or group, or membership of a cohort. */
export const Filter = t.Union([PropertyFilter, CohortFilter], { error: 'must be a property filter { property, source?, operator, value? } or { cohort }' });
export type Filter = typeof Filter.static;

export const Filters = t.Array(Filter, { maxItems: MAX_FILTERS, error: `must be a list of at most ${MAX_FILTERS} filters` });
