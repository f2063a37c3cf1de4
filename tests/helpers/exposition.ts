/**
 * A strict reader of the Prometheus text format (0.0.4) for tests: it throws, naming the line,
 * on anything a scraper would refuse or that breaks the format's conventions.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) throw new Error(`malformed labels in: ${line}`);
    if (m[1]! in labels) throw new Error(`label ${m[1]} repeated in: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\([\\"n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

function parseValue(text: string): number {
  if (text.endsWith('Inf')) return text.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

/** The family a sample belongs to: its own name, or a histogram's name without the suffix. */
function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const histogram = families.get(base);
  if (base !== name && histogram?.type === 'histogram') return histogram;
  return families.get(name);
}

/** Checks each histogram series: buckets ascending by `le`, cumulative, ending at `+Inf` equal to `_count`, with a `_sum`. */
function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${s.name} without le`);
      entry.buckets.push([parseValue(le), s.value]);
    } else if (s.name.endsWith('_sum')) entry.sum = s.value;
    else if (s.name.endsWith('_count')) entry.count = s.value;
    else throw new Error(`${s.name} in histogram ${family.name}`);
  }
  for (const [key, { buckets, sum, count }] of series) {
    const where = `${family.name}${key}`;
    if (sum === undefined || count === undefined) throw new Error(`${where}: _sum or _count missing`);
    if (buckets.at(-1)?.[0] !== Infinity) throw new Error(`${where}: the last bucket is not +Inf`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0])) throw new Error(`${where}: le not ascending`);
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${where}: buckets not cumulative`);
    }
    if (buckets.at(-1)![1] !== count) throw new Error(`${where}: +Inf bucket ${buckets.at(-1)![1]} differs from _count ${count}`);
  }
}

/** Parses exposition text; throws on the first thing that is not valid. */
export function parseExposition(text: string): Map<string, Family> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the text does not end with a line feed');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  for (const line of text.split('\n').slice(0, -1)) {
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      if (!new RegExp(`^${NAME}$`).test(name)) throw new Error(`bad metric name in: ${line}`);
      const family = families.get(name) ?? { name, help: '', type: '', samples: [] };
      families.set(name, family);
      if (family.samples.length > 0) throw new Error(`${kind} after samples of ${name}`);
      if (kind === 'HELP') family.help = rest;
      else if (family.type !== '' || !TYPES.has(rest)) throw new Error(`bad or repeated TYPE: ${line}`);
      else family.type = rest;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m || !VALUE.test(m[3]!)) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const sample = { name: m[1]!, labels: m[2] === undefined ? {} : parseLabels(m[2], line), value: parseValue(m[3]!) };
    const family = familyOf(families, sample.name);
    if (!family || family.help === '' || family.type === '') throw new Error(`sample without HELP and TYPE: ${line}`);
    const id = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(id)) throw new Error(`repeated series: ${line}`);
    seen.add(id);
    family.samples.push(sample);
  }
  for (const family of families.values()) {
    if (family.help === '' || family.type === '') throw new Error(`${family.name} lacks HELP or TYPE`);
    if (family.type === 'counter' && !family.name.endsWith('_total')) throw new Error(`counter ${family.name} does not end in _total`);
    if (family.type === 'counter' && family.samples.some((s) => !(s.value >= 0))) throw new Error(`counter ${family.name} below zero`);
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

/** The value of the sample `name` whose labels include `labels`; 0 when there is none yet. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(families, name);
  const sample = family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample?.value ?? 0;
}
