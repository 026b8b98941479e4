import { existsSync, readFileSync } from 'node:fs';

export type Align = 'left' | 'right';

/** A GitHub-flavoured markdown table; cells are escaped so a `|` in a value cannot break it. */
export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly Align[],
): string {
  const esc = (cell: string): string => cell.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const line = (cells: readonly string[]): string => `| ${cells.map(esc).join(' | ')} |`;
  const rule = headers.map((_, i) => (align?.[i] === 'right' ? '---:' : '---'));
  for (const row of rows) {
    if (row.length !== headers.length) {
      throw new RangeError(`table row has ${row.length} cells, headers have ${headers.length}`);
    }
  }
  return [line(headers), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** 1234567 → "1,234,567" (fixed locale so the file does not change with the machine's locale). */
export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function fixed(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ratio(value: number): string {
  return `${fixed(value, 2)}×`;
}

export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${fixed(value / 1024, 1)} KiB`;
  return `${fixed(value / 1024 / 1024, 2)} MiB`;
}

/**
 * A goal line: met, or missed by how much. `higherIsBetter` decides the direction; `unit`
 * formats the gap (e.g. "×" ratios, " ms").
 */
export function goal(
  label: string,
  actual: number,
  target: number,
  higherIsBetter: boolean,
  format: (n: number) => string,
): string {
  const met = higherIsBetter ? actual >= target : actual <= target;
  if (met) return `- ✅ ${label}: ${format(actual)} (goal ${higherIsBetter ? '≥' : '≤'} ${format(target)})`;
  const gap = higherIsBetter
    ? `${fixed((1 - actual / target) * 100, 1)}% short`
    : `${format(actual - target)} over`;
  return `- ❌ ${label}: ${format(actual)} (goal ${higherIsBetter ? '≥' : '≤'} ${format(target)}; missed, ${gap})`;
}

/**
 * The explanation of a missed goal, written from a profile: kept in bench/why/<suite>.md so that
 * re-running the bench keeps it (BENCHMARKS.md is regenerated). Without that file the section says
 * so and stands on what was measured: the figures never wait for anyone.
 */
export function whyMissed(suite: string, what = 'a goal is'): string {
  const file = new URL(`../why/${suite}.md`, import.meta.url);
  const text = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (text === '') {
    return `> **Why ${what} missed** — no profile-backed explanation: bench/why/${suite}.md does not exist. The figures above are what this run measured.`;
  }
  return `**Why ${what} missed** (bench/why/${suite}.md, written from profiles of this code; the explanation, unlike the numbers, is not regenerated):\n\n${text}`;
}
