import { describe, expect, it } from 'vitest';
import { goal, table } from '../../../bench/lib/markdown.js';
import { extractSections, renderSection } from '../../../bench/lib/report.js';
import { median, quartiles, rotate } from '../../../bench/lib/stats.js';
import { groupedBarChart, niceMax } from '../../../bench/lib/svg.js';

describe('stats', () => {
  it('median, quartiles and rotation', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(RangeError);
    expect(quartiles([1, 2, 3, 4, 5, 6, 7, 8])).toEqual({ q1: 2, q3: 6 });
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], -1)).toEqual(['c', 'a', 'b']);
    expect(rotate([], 3)).toEqual([]);
  });
});

describe('markdown', () => {
  it('renders an aligned table and escapes pipes', () => {
    expect(table(['a', 'b'], [['x|y', '2']], ['left', 'right'])).toBe(
      '| a | b |\n| --- | ---: |\n| x\\|y | 2 |',
    );
    expect(() => table(['a', 'b'], [['1']])).toThrow(/1 cells/);
  });

  it('says whether a goal is met and by how much it is missed', () => {
    const fmt = (n: number): string => `${n.toFixed(1)}×`;
    expect(goal('speed', 5, 4, true, fmt)).toMatch(/^- ✅ speed: 5\.0×/);
    expect(goal('speed', 3, 4, true, fmt)).toContain('missed, 25.0% short');
    expect(goal('latency', 7, 5, false, (n) => `${n.toFixed(1)} ms`)).toContain('missed, 2.0 ms over');
  });
});

describe('report sections', () => {
  const outcome = { ok: true, name: 'demo', title: 'Demo', markdown: 'body', ms: 1500 };

  it('round-trips sections through the markers so --only keeps the others', () => {
    const a = renderSection({ name: 'a', outcome, command: 'npm run bench', date: 'D' });
    const b = renderSection({
      name: 'b',
      outcome: { ok: false, error: 'Error: boom', ms: 10 },
      command: 'npm run bench',
      date: 'D',
    });
    expect(b).toContain('## b — FAILED');
    expect(b).toContain('Error: boom');
    const sections = extractSections(`# Benchmarks\n\n${a}\n\n${b}\n`);
    expect([...sections.keys()]).toEqual(['a', 'b']);
    expect(sections.get('a')).toBe(a);
    expect(sections.get('b')).toBe(b);
  });
});

describe('svg chart', () => {
  it('draws one bar per series and category, with a legend and a nice axis', () => {
    const svg = groupedBarChart({
      title: 'T <1>',
      categories: ['batch 100', 'batch 1000'],
      series: [
        { name: 'x', values: [10, 20] },
        { name: 'y', values: [30, 45] },
      ],
      yLabel: 'records / s',
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<title>/g)).toHaveLength(4);
    expect(svg).toContain('T &lt;1&gt;');
    expect(svg).toContain('>50<');
    expect(niceMax(41)).toBe(50);
    expect(niceMax(0.7)).toBe(0.8);
    expect(() =>
      groupedBarChart({ title: '', categories: ['a'], series: [{ name: 'x', values: [] }], yLabel: '' }),
    ).toThrow(RangeError);
  });
});
