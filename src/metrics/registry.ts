import { familyHeader, formatValue, labelSet, type MetricType } from './exposition';

/** One value per label name: a series of a labelled metric. */
export type LabelValues<L extends string> = Readonly<Record<L, string>>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Names starting with `__` are reserved for Prometheus itself. */
const LABEL_NAME = /^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$/;

interface Family {
  readonly name: string;
  /** The whole family as exposition text: header, then one line per sample. */
  render(): string;
}

/**
 * A metric's series, one per combination of label values, kept in the order first seen. A
 * metric without labels always has its one series, so it is exposed (at zero) before anything
 * happens.
 */
abstract class LabelledFamily<L extends string, S> implements Family {
  private readonly seriesByKey = new Map<string, { values: string[]; state: S }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly type: MetricType,
    protected readonly labelNames: readonly L[],
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    for (const label of labelNames) if (!LABEL_NAME.test(label)) throw new Error(`${name}: invalid label name ${JSON.stringify(label)}`);
    if (new Set(labelNames).size !== labelNames.length) throw new Error(`${name}: a label name is repeated`);
  }

  protected abstract initialState(): S;

  /** The sample lines of one series. */
  protected abstract sampleLines(values: readonly string[], state: S): string[];

  protected stateOf(labels: LabelValues<L>): S {
    const values = this.labelNames.map((name) => labels[name]);
    // Label values hold no NUL (they are names, routes and statuses).
    const key = values.join('\u0000');
    let entry = this.seriesByKey.get(key);
    if (!entry) {
      entry = { values, state: this.initialState() };
      this.seriesByKey.set(key, entry);
    }
    return entry.state;
  }

  render(): string {
    if (this.labelNames.length === 0) this.stateOf({} as LabelValues<L>);
    const lines = [...this.seriesByKey.values()].flatMap(({ values, state }) => this.sampleLines(values, state));
    return familyHeader(this.name, this.help, this.type) + lines.map((line) => `${line}\n`).join('');
  }
}

/** A value that only goes up (from zero at start), such as requests answered. */
export class Counter<L extends string> extends LabelledFamily<L, { value: number }> {
  constructor(name: string, help: string, labelNames: readonly L[]) {
    if (!name.endsWith('_total')) throw new Error(`counter ${name} must end in _total`);
    super(name, help, 'counter', labelNames);
  }

  inc(labels: LabelValues<L>, by = 1): void {
    this.add(this.stateOf(labels), by);
  }

  /** The series of `labels`, to count into without finding it each time (for counts made per request). */
  series(labels: LabelValues<L>): (by?: number) => void {
    const state = this.stateOf(labels);
    return (by = 1) => this.add(state, by);
  }

  private add(state: { value: number }, by: number): void {
    if (!(by >= 0)) throw new RangeError(`${this.name} can only go up, not by ${by}`);
    state.value += by;
  }

  protected initialState() {
    return { value: 0 };
  }

  protected sampleLines(values: readonly string[], state: { value: number }): string[] {
    return [`${this.name}${labelSet(this.labelNames, values)} ${formatValue(state.value)}`];
  }
}

interface HistogramState {
  /** Observations per bucket, not yet cumulative: the last one counts those above every bound. */
  perBucket: number[];
  sum: number;
  count: number;
}

/** Observations counted into buckets by upper bound, with their sum and count (for averages and quantiles). */
export class Histogram<L extends string> extends LabelledFamily<L, HistogramState> {
  private readonly bounds: readonly string[];

  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    /** Upper bounds, ascending; `+Inf` is added. */
    private readonly buckets: readonly number[],
  ) {
    if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) {
      throw new Error(`${name}: buckets must be finite and ascending`);
    }
    if ((labelNames as readonly string[]).includes('le')) throw new Error(`${name}: le is the bucket label`);
    super(name, help, 'histogram', labelNames);
    this.bounds = [...buckets.map(formatValue), '+Inf'];
  }

  observe(labels: LabelValues<L>, value: number): void {
    this.record(this.stateOf(labels), value);
  }

  /** The series of `labels`, to observe into without finding it each time (for observations made per request). */
  series(labels: LabelValues<L>): (value: number) => void {
    const state = this.stateOf(labels);
    return (value) => this.record(state, value);
  }

  private record(state: HistogramState, value: number): void {
    const bucket = this.buckets.findIndex((bound) => value <= bound);
    state.perBucket[bucket === -1 ? this.buckets.length : bucket]!++;
    state.sum += value;
    state.count++;
  }

  protected initialState(): HistogramState {
    return { perBucket: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
  }

  protected sampleLines(values: readonly string[], state: HistogramState): string[] {
    const bucketLabels = [...this.labelNames, 'le'];
    let cumulative = 0;
    const lines = this.bounds.map((le, i) => {
      cumulative += state.perBucket[i]!;
      return `${this.name}_bucket${labelSet(bucketLabels, [...values, le])} ${cumulative}`;
    });
    const labels = labelSet(this.labelNames, values);
    return [...lines, `${this.name}_sum${labels} ${formatValue(state.sum)}`, `${this.name}_count${labels} ${state.count}`];
  }
}

/** A gauge read at scrape time (such as a queue's length), so it is never stale and costs nothing between scrapes. */
class SampledGauge implements Family {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly sample: () => number,
  ) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
  }

  render(): string {
    return `${familyHeader(this.name, this.help, 'gauge')}${this.name} ${formatValue(this.sample())}\n`;
  }
}

/** The metrics of a process, exposed together in registration order. */
export class MetricsRegistry {
  private readonly families: Family[] = [];

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.add(new Counter(name, help, labelNames));
  }

  histogram<L extends string = never>(name: string, help: string, buckets: readonly number[], labelNames: readonly L[] = []): Histogram<L> {
    return this.add(new Histogram(name, help, labelNames, buckets));
  }

  sampledGauge(name: string, help: string, sample: () => number): void {
    this.add(new SampledGauge(name, help, sample));
  }

  /** Every metric as exposition text. */
  render(): string {
    return this.families.map((family) => family.render()).join('');
  }

  private add<F extends Family>(family: F): F {
    if (this.families.some((f) => f.name === family.name)) throw new Error(`metric ${family.name} is registered twice`);
    this.families.push(family);
    return family;
  }
}
