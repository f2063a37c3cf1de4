import type { CompileContext } from './compile-context';
import { KEY_MASK, KEY_TIME_SHIFT } from './funnel-events';
import { chainedLayers, ofStarts, unorderedLayers, type Layer } from './funnel-paths';
import { windowEnd, type FunnelWindow } from './funnel-window';
import type { FunnelsQuery } from './model';
import type { TimeRange } from './time-range';

/**
 * Each actor's best conversion, from its events (`funnelEvents`) gathered in one array in event
 * order: a row per actor who did a first step within the range, with `depth` (steps converted,
 * from 1), `times` (seconds from each step to the next along the conversion; those past
 * `depth - 1` mean nothing) and, with a breakdown, the `breakdownValue` of its first step's event.
 * docs/api/insights-funnels.md.part has the definition; in short:
 * - a conversion starts at an event of the first step within the range (unordered: of any step);
 * - ordered: each next step is the actor's first event of that step after the previous step's
 *   event; strict: the actor's very next event, which must be of that step; unordered: the first
 *   event of any step not yet filled, which fills the first such step (in request order) it
 *   matches. One event fills one step, so steps [a, a] need two a events;
 * - steps count while within the window from the first step's time (inclusive);
 * - an exclusion (event, fromStep, toStep) cuts the conversion after fromStep when an excluded
 *   event comes after fromStep's event and before that of a step up to toStep;
 * - the best conversion is the deepest; of equal ones, the one started first.
 *
 * With `withActor`, each row also has its `actor` (the persons behind a step).
 *
 * The statement is a chain of named queries, each adding columns to the one before: the engine
 * expands an alias wherever it is used, so columns built on columns of one SELECT would grow the
 * statement past its size limit.
 */
export function funnelWalk(query: FunnelsQuery, window: FunnelWindow, range: TimeRange, events: string, context: CompileContext, withActor = false): string {
  const { params } = context;
  const steps = query.steps.length;
  const canStart = (mask: string) => (query.order === 'unordered' ? `bitAnd(${mask}, ${(1 << steps) - 1}) != 0` : `bitTest(${mask}, 0)`);
  const lastStart = params.bind(Number(range.to - range.from), 'Int64');
  const rangeStart = params.bind(Number(range.from), 'Int64');
  const stepKeys = ['starts', ...query.steps.slice(1).map((_, k) => `step${k + 1}`)];
  const perStart = [...stepKeys, ...(query.exclusions ?? []).map((_, j) => `excluded${j}`)];
  // The end of the window of a conversion started at `starts`, µs since the range's start.
  const end = `${windowEnd(window, `(${time('starts')} + ${rangeStart})`, params)} - ${rangeStart}`;
  const times = stepKeys.slice(1).map((column, k) => `(${time(`${column}[chosen]`)} - ${time(`${stepKeys[k]}[chosen]`)}) / 1e6`);
  const layers: Layer[] = [
    [`arrayMap(x -> toUInt32(bitAnd(x, ${KEY_MASK})), keys) AS masks`],
    [`arrayPushBack(masks, ${KEY_MASK}) AS endedMasks`, `arrayMap((x, m) -> ${canStart('m')} AND ${time('x')} <= ${lastStart}, keys, masks) AS startFlags`],
    [`${ofStarts('keys')} AS starts`],
    ...(query.order === 'unordered' ? unorderedLayers(query) : chainedLayers(query)),
    [`arrayMap((${perStart.join(', ')}) -> ${depthOf(query, end)}, ${perStart.join(', ')}) AS depths`],
    [`arrayMax(arrayMap((d, i) -> (d, -toInt64(i)), depths, arrayEnumerate(depths))) AS best`],
    ['best.1 AS depth', '-best.2 AS chosen'],
    [`[${times.join(', ')}] AS times`, ...(query.breakdown ? ['startValues[chosen] AS firstValue'] : [])],
  ];
  // The events that start conversions, as `startFlags` marks them.
  const startable = `${canStart('mask')} AND ${time('key')} <= ${lastStart}`;
  const actors = `SELECT ${withActor ? 'actor, ' : ''}arraySort(groupArray(key)) AS keys${query.breakdown ? `, arraySort((v, k) -> k, groupArrayIf(breakdownValue, ${startable}), groupArrayIf(key, ${startable})) AS startValues` : ''}
${fromSubquery(events)}
GROUP BY actor
HAVING countIf(${startable}) > 0`;
  // Each named for what it adds (the first column).
  const names = layers.map((columns) => `with_${columns[0]!.slice(columns[0]!.lastIndexOf(' AS ') + 4)}`);
  const named = layers.map((columns, i) => `  ${names[i]} AS (SELECT *, ${columns.join(', ')} FROM ${i === 0 ? 'actors' : names[i - 1]})`);
  return `WITH
  actors AS (
${indent(indent(actors))}
  ),
${named.join(',\n')}
SELECT depth, times${query.breakdown ? ', firstValue AS breakdownValue' : ''}${withActor ? ', actor' : ''}
FROM ${names.at(-1)}`;
}

const indent = (text: string) => text.replace(/^/gm, '  ');

/** `FROM (` the query `inner`, indented, `)`. */
export function fromSubquery(inner: string): string {
  return `FROM (\n${indent(inner)}\n)`;
}

/** The time of an event from its key: µs since the range's start. */
const time = (key: string) => `toInt64(bitShiftRight(${key}, ${KEY_TIME_SHIFT}))`;

/**
 * The steps a conversion counts, from the keys of its steps (`starts`, `step1`..., 0 for none) and
 * of excluded events (`excluded0`...), `end` the last time (µs since the range's start) its window
 * takes: the steps reached within the window, cut by each exclusion (f, t) after step f plus
 * those of its steps up to t before the excluded event, when one of them comes after it.
 */
function depthOf(query: FunnelsQuery, end: string): string {
  const later = [...query.steps.keys()].slice(1);
  const within = (k: number) => `(step${k} != 0 AND ${time(`step${k}`)} <= ${end})`;
  const reached = `1 + ${later.map(within).join(' + ')}`;
  const cuts = (query.exclusions ?? []).map(({ fromStep: f, toStep: t }, j) => {
    const spanned = [...Array(t - f).keys()].map((i) => f + 1 + i);
    const after = spanned.map((k) => `(${within(k)} AND step${k} > excluded${j})`).join(' OR ');
    const before = spanned.map((k) => `(${within(k)} AND step${k} < excluded${j})`).join(' + ');
    return `if(excluded${j} != 0 AND (${after}), ${f + 1} + ${before}, ${reached})`;
  });
  return cuts.length === 0 ? reached : `least(${reached}, ${cuts.join(', ')})`;
}
