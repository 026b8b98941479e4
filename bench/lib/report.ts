import type { ChildOutcome } from './child.js';

export interface SectionResult {
  name: string;
  outcome: ChildOutcome;
  command: string;
  date: string;
}

const START = /<!-- suite:([a-z0-9-]+) -->/g;

/** The suite sections of a previous BENCHMARKS.md, by name (kept when --only skips them). */
export function extractSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const match of text.matchAll(START)) {
    const name = match[1] as string;
    const end = `<!-- /suite:${name} -->`;
    const stop = text.indexOf(end, match.index);
    if (stop < 0) continue;
    sections.set(name, text.slice(match.index, stop + end.length));
  }
  return sections;
}

/** One suite's section, wrapped in markers so a later `--only` run can replace just it. */
export function renderSection(result: SectionResult, extra = ''): string {
  const { name, outcome } = result;
  const seconds = (outcome.ms / 1000).toFixed(1);
  const lines = [`<!-- suite:${name} -->`];
  if (outcome.ok) {
    lines.push(
      `## ${outcome.title ?? name}`,
      '',
      `_Suite \`${name}\`: \`${result.command}\`, ${result.date}, ${seconds} s._`,
      '',
      (outcome.markdown ?? '').trim() + extra,
    );
  } else {
    lines.push(
      `## ${name} — FAILED`,
      '',
      `_Suite \`${name}\`: \`${result.command}\`, ${result.date}, failed after ${seconds} s:_`,
      '',
      '```',
      (outcome.error ?? 'unknown error').trim(),
      '```',
    );
  }
  lines.push(`<!-- /suite:${name} -->`);
  return lines.join('\n');
}
