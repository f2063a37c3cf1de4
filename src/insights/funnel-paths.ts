import { KEY_MASK, keyTime } from './funnel-events';
import type { FunnelsQuery } from './model';

/**
 * The conversions of an actor, one per start (the events `startFlags` marks), as columns of arrays
 * aligned with the starts: for each step k the time of its event (`time<k>`: µs since the range's
 * start plus 1, so that 0 is none) and, when the funnel has exclusions, its place in the actor's
 * order (`order<k>`, 0: none; from step 1) and that of the first excluded event after each
 * exclusion's fromStep (`excluded<j>`, 0: none); places compare as the events' order does. Built
 * in layers (each a list of columns of one query over the one before) from `keys` (the actor's
 * event keys in order), `keyTimes` (their times, plus 1), `endedMasks` and `startFlags`.
 *
 * Every array function takes the arrays it reads as arguments and never captures one: a lambda
 * that captures an array copies it once per element it runs over, so per-start look-ups would
 * cost events × starts (40,000 events of one actor took 24 GiB). Here a step costs a few passes
 * over the actor's events (a sort, for unordered funnels).
 */

export type Layer = string[];

/** The values of `array` (aligned with `keys`) at the starts. */
const ofStarts = (array: string) => `arrayFilter((x, start) -> start, ${array}, startFlags)`;

/** An event's `time<k>` from its key (0 stays none). */
const timeOf = (key: string) => `if(${key} = 0, 0, ${keyTime(key)} + 1)`;

/**
 * For each position, A's value at the next position whose event has `bit` (0 if none): filled
 * back from the end, each position without the bit taking the value after it, over A followed by
 * a 0 that every bit has (`endedMasks`: the masks and then all bits), then shifted by one.
 */
function later(bit: number, A: string): string {
  return `arrayPopFront(arrayReverseFill((a, m) -> bitTest(m, ${bit}), arrayPushBack(${A}, 0), endedMasks))`;
}

/** For each position, A's value at the very next position if its event has `bit`, else 0 (strict funnels). */
function strictlyNext(bit: number, A: string): string {
  return `arrayPopFront(arrayMap((a, m) -> if(bitTest(m, ${bit}), a, 0), arrayPushBack(${A}, 0), endedMasks))`;
}

/**
 * Ordered and strict: from each start, A's value at the event of step `step` of the conversion
 * started there, or with `then` (the bit of an exclusion) at the first event with that bit after
 * step `step`'s. A advanced by one step, from the last back to the first: for each position, the
 * value at the first event of the step after it (strict: at the very next event, if of the step).
 * A step costs a pass over the actor's events per step before it, which measured cheaper than
 * finding each step's position once and reading values at positions (arrayReduceInRanges).
 */
function chainedStep(query: FunnelsQuery, A: string, step: number, then?: number): string {
  const follow = (bit: number, values: string) => (query.order === 'strict' ? strictlyNext(bit, values) : later(bit, values));
  let values = then === undefined ? A : later(then, A);
  for (let k = step; k >= 1; k--) values = follow(k, values);
  return ofStarts(values);
}

/**
 * Ordered and strict: the times, from the events' (`keyTimes`, plus 1 as `time<k>`); places, only
 * with exclusions, are positions in `keys`. 64-bit values only, once the keys are sorted.
 */
export function chainedLayers(query: FunnelsQuery): Layer[] {
  const steps = [...query.steps.keys()];
  const exclusions = query.exclusions ?? [];
  const positions = 'arrayEnumerate(keys)';
  return [
    [
      ...steps.map((k) => `${chainedStep(query, 'keyTimes', k)} AS time${k}`),
      ...(exclusions.length === 0 ? [] : steps.slice(1).map((k) => `${chainedStep(query, positions, k)} AS order${k}`)),
      ...exclusions.map(({ fromStep }, j) => `${chainedStep(query, positions, fromStep, steps.length + j)} AS excluded${j}`),
    ],
  ];
}

/**
 * Layers that end with `name`: the values of `table` (an array aligned with `keys`) at the
 * positions `at` (0: none, which reads `none`). Table entries and look-ups are merged into one
 * array sorted by a number (position, then look-up or not, then the look-up's index), the
 * table's values filled forward onto the look-ups, which are then put back in their order.
 * Sorting by a number rather than by tuples keeps it cheap.
 */
function lookUp(name: string, table: string, at: string, none: string): Layer[] {
  const [order, sorted, values] = [`${name}Order`, `${name}Sorted`, `${name}Values`];
  const isLookUp = (k: string) => `bitTest(${k}, 32)`;
  return [
    [`arrayConcat(arrayMap(i -> bitShiftLeft(toUInt64(i), 33), arrayEnumerate(${table})), arrayMap((p, i) -> bitShiftLeft(toUInt64(p), 33) + 4294967296 + i, ${at}, arrayEnumerate(${at}))) AS ${order}`],
    [`arraySort(${order}) AS ${sorted}`, `arraySort((v, k) -> k, arrayConcat(${table}, arrayWithConstant(length(${at}), ${none})), ${order}) AS ${values}`],
    [
      `arraySort((v, k) -> bitAnd(k, 4294967295), arrayFilter((v, k) -> ${isLookUp('k')}, arrayFill((v, k) -> NOT ${isLookUp('k')}, ${values}, ${sorted}), ${sorted}), arrayFilter(k -> ${isLookUp('k')}, ${sorted})) AS ${name}`,
    ],
  ];
}

const NO_POSITION = 4294967295;
/** The lowest bit set in `mask` (UInt32), 0 if none. */
const lowestBit = (mask: string) => `toUInt32(bitAnd(${mask}, bitNot(${mask}) + 1))`;

/**
 * Unordered (the places are the events' keys, which sort as they happen): from each start
 * (which fills the first step it matches), the next step taken is the earliest event after the
 * last one taken that matches a step not yet filled; it fills the first such step it matches.
 * `places`, per position: its key, the position of the next event of each step, and the key of
 * the next excluded event of each exclusion. Per step, a look-up of it at the positions last
 * taken (`at<k>`) gives `found<k>`: the key of step k, and whence the next position `at<k+1>`
 * (the earliest of the next events of unfilled steps) and the steps filled (`filled<k>`: their
 * bits).
 */
export function unorderedLayers(query: FunnelsQuery): Layer[] {
  const steps = query.steps.length;
  const bits = [...Array(steps).keys()];
  const exclusions = query.exclusions ?? [];
  const excludedBits = exclusions.map((_, j) => steps + j);
  const next = (f: string, b: number) => `tupleElement(tupleElement(${f}, 2), ${b + 1})`;
  const excludedNext = (f: string, j: number) => `tupleElement(tupleElement(${f}, 3), ${j + 1})`;
  const names = [...bits.map((b) => `n${b}`), ...excludedBits.map((b) => `n${b}`)];
  const payload = `(k, tuple(${bits.map((b) => `n${b}`).join(', ')}), tuple(${excludedBits.map((b) => `n${b}`).join(', ') || '0'}))`;
  const none = `(toUInt128(0), tuple(${bits.map(() => 'toUInt32(0)').join(', ')}), tuple(${excludedBits.map(() => 'toUInt128(0)').join(', ') || '0'}))`;
  const layers: Layer[] = [
    [`${ofStarts('keys')} AS starts`],
    [`arrayMap((k, ${names.join(', ')}) -> ${payload}, keys, ${[...bits.map((b) => later(b, 'arrayEnumerate(keys)')), ...excludedBits.map((b) => later(b, 'keys'))].join(', ')}) AS places`],
    [`${ofStarts('arrayEnumerate(keys)')} AS at0`, `arrayMap(s -> ${lowestBit(`bitAnd(toUInt32(bitAnd(s, ${KEY_MASK})), ${(1 << steps) - 1})`)}, starts) AS filled0`],
  ];
  const earliest = `arrayMin([${bits.map((b) => `if(bitTest(filled, ${b}) OR ${next('f', b)} = 0, ${NO_POSITION}, ${next('f', b)})`).join(', ')}])`;
  const fill = `multiIf(p = 0, filled, ${bits.map((b) => `NOT bitTest(filled, ${b}) AND ${next('f', b)} = p, bitOr(filled, ${1 << b})`).join(', ')}, filled)`;
  for (let k = 0; k < steps; k++) {
    layers.push(...lookUp(`found${k}`, 'places', `at${k}`, none));
    const keysFound: Layer = k === 0 ? [] : [`arrayMap(f -> f.1, found${k}) AS order${k}`];
    exclusions.forEach(({ fromStep }, j) => fromStep === k && keysFound.push(`arrayMap(f -> ${excludedNext('f', j)}, found${k}) AS excluded${j}`));
    if (keysFound.length > 0) layers.push(keysFound);
    if (k === steps - 1) break;
    layers.push([`arrayMap((f, filled) -> if(${earliest} = ${NO_POSITION}, 0, ${earliest}), found${k}, filled${k}) AS at${k + 1}`]);
    if (k < steps - 2) layers.push([`arrayMap((p, f, filled) -> ${fill}, at${k + 1}, found${k}, filled${k}) AS filled${k + 1}`]);
  }
  layers.push(bits.map((k) => `arrayMap(x -> ${timeOf('x')}, ${k === 0 ? 'starts' : `order${k}`}) AS time${k}`));
  return layers;
}
