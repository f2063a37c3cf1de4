import { t } from 'elysia';
import { literalUnion } from '../events/model';
import { Page, PageParams } from '../http/pagination';

/** Segment's limit: ids per regulation. */
export const MAX_SUBJECT_IDS = 5000;
/** Longest subject id: far beyond any real user or anonymous id. */
export const MAX_SUBJECT_ID_LENGTH = 1000;

export const REGULATION_TYPES = ['SUPPRESS', 'DELETE', 'SUPPRESS_WITH_DELETE', 'UNSUPPRESS'] as const;
export type RegulationType = (typeof REGULATION_TYPES)[number];
/** The event columns a regulation names its subjects by. */
export const SUBJECT_TYPES = ['userId', 'anonymousId'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

export const RegulationInput = t.Object(
  {
    regulationType: literalUnion(REGULATION_TYPES),
    subjectType: literalUnion(SUBJECT_TYPES),
    subjectIds: t.Array(
      t.String({ minLength: 1, maxLength: MAX_SUBJECT_ID_LENGTH, error: `must be a string of 1 to ${MAX_SUBJECT_ID_LENGTH} characters` }),
      { minItems: 1, maxItems: MAX_SUBJECT_IDS, error: `must be an array of 1 to ${MAX_SUBJECT_IDS} ids` },
    ),
  },
  { additionalProperties: false, examples: [{ regulationType: 'SUPPRESS_WITH_DELETE', subjectType: 'userId', subjectIds: ['user-42'] }] },
);
export type RegulationInput = typeof RegulationInput.static;

export const RegulationAccepted = t.Object({ id: t.String({ format: 'uuid' }) });

export const Regulation = t.Object({
  id: t.String({ format: 'uuid' }),
  regulationType: t.String(),
  subjectType: t.String(),
  subjectIds: t.Array(t.String()),
  subjectCount: t.Integer(),
  status: t.String({ description: 'pending, running, finished or failed' }),
  eventsDeleted: t.Integer({ description: 'Events erased (DELETE and SUPPRESS_WITH_DELETE), counted just before the delete.' }),
  error: t.Optional(t.String({ description: 'Why it failed.' })),
  requestedBy: t.Object(
    {
      keyKind: t.String({ description: 'private or admin' }),
      keyId: t.String({ description: 'The first 12 hex digits of the SHA-256 of the key: which key asked, without the key.' }),
    },
  ),
  createdAt: t.String({ format: 'date-time' }),
  finishedAt: t.Optional(t.String({ format: 'date-time' })),
});
export type Regulation = typeof Regulation.static;

export const RegulationsPage = Page(Regulation);
export const ListRegulationsQuery = t.Object(PageParams, { additionalProperties: false });
export const RegulationIdParams = t.Object({ id: t.String() });
