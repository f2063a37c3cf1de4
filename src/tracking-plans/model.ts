import { t } from 'elysia';
import { Event } from '../events/model';
import { DOORS, type Door } from '../events/ingest-buffer';
import { PageParams } from '../http/pagination';

const Day = t.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', format: 'date', error: 'must be a day as YYYY-MM-DD' });
const Mode = t.Union([t.Literal('record'), t.Literal('drop'), t.Literal('quarantine')], {
  error: 'must be record, drop or quarantine',
  description: 'What becomes of an event that breaks the plan: `record` stores it and counts its violations, `drop` counts them and stores nothing, `quarantine` counts them and keeps it apart (GET /quarantine) until a replay.',
});

const Sources = t.Partial(t.Object(Object.fromEntries(DOORS.map((door) => [door, Mode])) as Record<Door, typeof Mode>, { additionalProperties: false }), {
  error: `must map doors (${DOORS.join(', ')}) to modes`,
  description: 'A mode per door, for the doors that are not to take `mode`: `events` (POST /events), `segment` (/v1/*: Segment’s and RudderStack’s SDKs, and the served tracker), `plausible` (/api/event), `import` (POST /events/import).',
});

const Announce = t.Boolean({
  error: 'must be true or false',
  description: 'Whether a kind of violation (event, path, rule) the workspace never had is stored as a `$tracking_plan_violation` event, which its webhooks deliver (signed, retried). Off unless set.',
});

export const PlanBody = t.Object(
  {
    format: t.Union([t.Literal('native'), t.Literal('segment'), t.Literal('rudderstack')], { error: 'must be native, segment or rudderstack', description: 'The format of `plan`.' }),
    plan: t.Unknown({ description: "The plan: native (`{ events: { <name>: <JSON Schema of properties> }, identify?, group? }`), Segment's tracking plan JSON, or RudderStack's." }),
    mode: Mode,
    sources: t.Optional(Sources),
    announce: t.Optional(Announce),
  },
  { additionalProperties: false },
);

const JsonSchemaObject = t.Record(t.String(), t.Unknown());
export const PlanAnswer = t.Object({
  format: t.Literal('native'),
  plan: t.Object({ events: t.Record(t.String(), JsonSchemaObject), identify: t.Optional(JsonSchemaObject), group: t.Optional(JsonSchemaObject) }),
  mode: Mode,
  sources: Sources,
  announce: Announce,
  version: t.Number({ description: 'One past the previous plan of the workspace: every PUT makes a new version.' }),
  importedFrom: t.String({ description: 'The format the plan was sent in.' }),
  createdAt: t.String(),
  ignored: t.Optional(t.Array(t.String(), { description: 'PUT only: the rules of the plan sent that are not enforced (page and screen calls, other sections), by JSON Pointer.' })),
});

export const Violation = t.Object({
  event: t.String({ description: 'The event name (`$identify`, `$group` for traits).' }),
  path: t.String({ description: 'The property path, under its object: `properties.price`, `traits.email`.' }),
  kind: t.String({ description: 'The rule broken (the JSON Schema keyword): `required`, `type`, `additionalProperties`, `enum`, `pattern`, ...' }),
  expected: t.String(),
  actual: t.String({ description: 'What came: a JSON type (`string`, `integer`, ...), or `absent`.' }),
});

export const ViolationsQuery = t.Object(
  {
    event: t.Optional(t.String({ minLength: 1, maxLength: 200, error: 'must be an event name of 1 to 200 characters' })),
    dateFrom: t.Optional(Day),
    dateTo: t.Optional(Day),
  },
  { additionalProperties: false },
);

export const ViolationsAnswer = t.Object({
  results: t.Array(
    t.Composite([
      Violation,
      t.Object({ count: t.Number(), examples: t.Array(t.String(), { description: 'Up to five of the values that came (their JSON), for rules on values; cleared by an erasure.' }), firstSeen: t.String(), lastSeen: t.String(), days: t.Array(t.Object({ day: t.String(), count: t.Number() })) }),
    ]),
  ),
});

export const QuarantineQuery = t.Object(PageParams, { additionalProperties: false });
const EventViolation = t.Composite([Violation, t.Object({ example: t.Optional(t.String({ description: "The value that came (its JSON, cut at 100 characters), for rules on values." })) })]);
export const QuarantinePage = t.Object({
  results: t.Array(t.Object({ event: Event, violations: t.Array(EventViolation), planVersion: t.Number(), quarantinedAt: t.String() })),
  limit: t.Number(),
  offset: t.Number(),
  total: t.Number(),
});
export const ReplayAnswer = t.Object({
  replayed: t.Number({ description: 'Events that now keep the plan: stored, and out of the quarantine.' }),
  remaining: t.Number({ description: 'Events still in quarantine (still breaking the plan, or beyond this call’s 10,000).' }),
});
