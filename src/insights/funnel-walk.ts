import type { CompileContext } from './compile-context';
import { KEY_MASK, keyTime } from './funnel-events';
import { chainedLayers, unorderedLayers, type Layer } from './funnel-paths';
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
 * With `withActor`, each row also has its `actor` (the persons behind a step); with `withStarts`,
 * every conversion of the actor rather than its best: `depths` and `starts` (the first step's time,
 * µs since the range's start plus 1), aligned (conversion over time counts each period's best).
 *
 * The statement is a chain of named queries, each adding columns to the one before: the engine
 * expands an alias wherever it is used, so columns built on columns of one SELECT would grow the
 * statement past its size limit.
 */
export function funnelWalk(query: FunnelsQuery, window: FunnelWindow, range: TimeRange, events: string, context: CompileContext, withActor = false, withStarts = false): string {
  const { params } = context;
  const steps = query.steps.length;
  const canStart = (mask: string) => (query.order === 'unordered' ? `bitAnd(${mask}, ${(1 << steps) - 1}) != 0` : `bitTest(${mask}, 0)`);
  const lastStart = params.bind(Number(range.to - range.from), 'Int64');
  const rangeStart = params.bind(Number(range.from), 'Int64');
  const afterFirst = [...query.steps.keys()].slice(1);
  const exclusions = query.exclusions ?? [];
  const perStart = [...query.steps.keys()].map((k) => `time${k}`);
  if (exclusions.length > 0) perStart.push(...afterFirst.map((k) => `order${k}`), ...exclusions.map((_, j) => `excluded${j}`));
  // The last time<k> the window of a conversion started at time0 takes.
  const end = `${windowEnd(window, `(time0 - 1 + ${rangeStart})`, params)} - ${rangeStart} + 1`;
  const times = afterFirst.map((k) => `(time${k}[chosen] - time${k - 1}[chosen]) / 1e6`);
  const layers: Layer[] = [
    // Each event's mask and time (plus 1, so that 0 can mean none), out of the 128-bit keys once.
    [`arrayMap(x -> toUInt32(bitAnd(x, ${KEY_MASK})), keys) AS masks`, `arrayMap(x -> ${keyTime('x')} + 1, keys) AS keyTimes`],
    [`arrayPushBack(masks, ${KEY_MASK}) AS endedMasks`, `arrayMap((t, m) -> ${canStart('m')} AND t <= ${lastStart} + 1, keyTimes, masks) AS startFlags`],
    ...(query.order === 'unordered' ? unorderedLayers(query) : chainedLayers(query)),
    [`arrayMap((${perStart.join(', ')}) -> ${depthOf(query, end)}, ${perStart.join(', ')}) AS depths`],
    // The deepest conversion, the first of equal ones.
    ['arrayMax(depths) AS depth', 'indexOf(depths, depth) AS chosen'],
    [`[${times.join(', ')}] AS times`, ...(query.breakdown ? ['startValues[chosen] AS firstValue'] : [])],
  ];
  // The events that start conversions, as `startFlags` marks them.
  const startable = `${canStart('mask')} AND ${keyTime('key')} <= ${lastStart}`;
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
SELECT depth, times${query.breakdown ? ', firstValue AS breakdownValue' : ''}${withActor ? ', actor' : ''}${withStarts ? ', depths, time0 AS starts' : ''}
FROM ${names.at(-1)}`;
}

const indent = (text: string) => text.replace(/^/gm, '  ');

/** `FROM (` the query `inner`, indented, `)`. */
export function fromSubquery(inner: string): string {
  return `FROM (\n${indent(inner)}\n)`;
}

/**
 * The steps a conversion counts, from its steps' times and places (`time<k>`, 0 for none, and
 * `order<k>`; funnel-paths.ts) and the places of excluded events (`excluded<j>`), `end` the last
 * time its window takes: the steps reached within the window, cut by each exclusion (f, t) after
 * step f plus those of its steps up to t before the excluded event, when one of them comes after it.
 */
function depthOf(query: FunnelsQuery, end: string): string {
  const later = [...query.steps.keys()].slice(1);
  const within = (k: number) => `(time${k} != 0 AND time${k} <= ${end})`;
  const reached = `1 + ${later.map(within).join(' + ')}`;
  const cuts = (query.exclusions ?? []).map(({ fromStep: f, toStep: t }, j) => {
    const spanned = [...Array(t - f).keys()].map((i) => f + 1 + i);
    const after = spanned.map((k) => `(${within(k)} AND order${k} > excluded${j})`).join(' OR ');
    const before = spanned.map((k) => `(${within(k)} AND order${k} < excluded${j})`).join(' + ');
    return `if(excluded${j} != 0 AND (${after}), ${f + 1} + ${before}, ${reached})`;
  });
  return cuts.length === 0 ? reached : `least(${reached}, ${cuts.join(', ')})`;
}
