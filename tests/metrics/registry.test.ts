import { describe, expect, test } from 'bun:test';
import { MetricsRegistry } from '../../src/metrics/registry';
import { parseExposition, sampleValue } from '../helpers/exposition';

describe('metrics registry', () => {
  test('counters: HELP and TYPE, labels in declared order, values added per series', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter('jobs_total', 'Jobs done.', ['queue', 'outcome']);
    counter.inc({ outcome: 'ok', queue: 'a' });
    counter.inc({ queue: 'a', outcome: 'ok' }, 2);
    counter.inc({ queue: 'b', outcome: 'error' });
    expect(registry.render()).toBe(
      '# HELP jobs_total Jobs done.\n# TYPE jobs_total counter\njobs_total{queue="a",outcome="ok"} 3\njobs_total{queue="b",outcome="error"} 1\n',
    );
  });

  test('label values escape backslash, double quote and line feed; HELP escapes backslash and line feed', () => {
    const registry = new MetricsRegistry();
    registry.counter('odd_total', 'A \\ and a\nbreak, "quoted".', ['v']).inc({ v: 'a\\b"c\nd' });
    const text = registry.render();
    expect(text).toContain('# HELP odd_total A \\\\ and a\\nbreak, "quoted".\n');
    expect(text).toContain('odd_total{v="a\\\\b\\"c\\nd"} 1\n');
    expect(sampleValue(parseExposition(text), 'odd_total', { v: 'a\\b"c\nd' })).toBe(1);
  });

  test('histograms: cumulative buckets ending in +Inf equal to _count, then _sum and _count', () => {
    const registry = new MetricsRegistry();
    const histogram = registry.histogram('wait_seconds', 'Waits.', [0.1, 1], ['kind']);
    for (const v of [0.05, 0.1, 0.5, 3]) histogram.observe({ kind: 'x' }, v);
    expect(registry.render()).toBe(
      [
        '# HELP wait_seconds Waits.',
        '# TYPE wait_seconds histogram',
        'wait_seconds_bucket{kind="x",le="0.1"} 2',
        'wait_seconds_bucket{kind="x",le="1"} 3',
        'wait_seconds_bucket{kind="x",le="+Inf"} 4',
        'wait_seconds_sum{kind="x"} 3.65',
        'wait_seconds_count{kind="x"} 4',
        '',
      ].join('\n'),
    );
  });

  test('metrics without labels are exposed at zero before anything happens; labelled ones by HELP and TYPE alone', () => {
    const registry = new MetricsRegistry();
    registry.histogram('size_rows', 'Sizes.', [10]);
    registry.counter('seen_total', 'Seen.', ['who']);
    let depth = 0;
    registry.sampledGauge('depth_items', 'Depth.', () => depth);
    depth = 7;
    const families = parseExposition(registry.render());
    expect(sampleValue(families, 'size_rows_count')).toBe(0);
    expect(sampleValue(families, 'size_rows_bucket', { le: '+Inf' })).toBe(0);
    expect(families.get('seen_total')?.samples).toEqual([]);
    expect(sampleValue(families, 'depth_items')).toBe(7);
  });

  test('bad definitions fail when the metric is made, not when it is used', () => {
    const registry = new MetricsRegistry();
    registry.counter('a_total', 'A.');
    expect(() => registry.counter('a_total', 'Again.')).toThrow('registered twice');
    expect(() => registry.counter('requests', 'No suffix.')).toThrow('_total');
    expect(() => registry.counter('bad-name_total', 'Dash.')).toThrow('invalid metric name');
    expect(() => registry.counter('b_total', 'B.', ['__reserved'])).toThrow('invalid label name');
    expect(() => registry.histogram('c_seconds', 'C.', [1, 0.5])).toThrow('ascending');
    expect(() => registry.histogram('d_seconds', 'D.', [1], ['le'])).toThrow('bucket label');
    expect(() => registry.counter('e_total', 'E.').inc({}, -1)).toThrow('only go up');
  });
});
