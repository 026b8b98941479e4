// docs/local.md's table of event source mapping rules names, for each rule, the test that proves
// it. A renamed or deleted test would leave the table pointing at nothing: this reads the table and
// finds every test it names.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HEADING = '### Event source mapping rules, rule by rule';
const PAGES = new Set(['params', 'batching', 'errors', 'partial', 'windows', 'filters']);

interface Row {
  line: number;
  rule: string;
  pages: string;
  emulator: string;
  test: string;
}

function tableRows(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(HEADING);
  if (start < 0) throw new Error(`docs/local.md has no "${HEADING}"`);
  const rows: Row[] = [];
  let inTable = false;
  for (let i = start + 1; i < lines.length; i++) {
    const text = lines[i] as string;
    if (text.startsWith('#')) break;
    if (!text.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = text
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
    if (cells[0] === 'rule' || cells[0]?.startsWith('---')) continue;
    expect(cells, `docs/local.md:${i + 1} has four cells`).toHaveLength(4);
    const [rule, pages, emulator, test] = cells as [string, string, string, string];
    rows.push({ line: i + 1, rule, pages, emulator, test });
  }
  return rows;
}

const rows = tableRows(readFileSync(path.join(root, 'docs/local.md'), 'utf8'));

describe("docs/local.md's event source mapping rule table", () => {
  it('lists the rules, each with the guide page it comes from and what the emulator does', () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
    for (const row of rows) {
      const pages = row.pages.replace(/\s*\((silent|silent on when)\)$/, '').split(/,\s*/);
      for (const page of pages) expect(PAGES, `docs/local.md:${row.line} page "${page}"`).toContain(page);
      expect(row.emulator, `docs/local.md:${row.line}`).not.toBe('');
    }
  });

  it.each(rows.filter((row) => !row.test.startsWith('—')).map((row) => [row.line, row.test] as const))(
    'docs/local.md:%i names a test that exists: %s',
    (line, cell) => {
      const match = /^`(test\/[^`]+\.test\.ts)` › (.+)$/.exec(cell);
      expect(match, `docs/local.md:${line}: "\`test/… .test.ts\` › <test name>"`).not.toBeNull();
      const [, file, name] = match as unknown as [string, string, string];
      expect(existsSync(path.join(root, file)), `${file} exists`).toBe(true);
      const source = readFileSync(path.join(root, file), 'utf8');
      // The name as written in it('…') / it("…"): apostrophes escaped in a single-quoted title.
      const written = [`'${name.replaceAll("'", "\\'")}'`, `"${name}"`, `\`${name}\``];
      expect(
        // it('…') or it.each(…)('…'): a describe of that name is not a test.
        written.some((title) => source.includes(`it(${title}`) || source.includes(`)(${title},`)),
        `${file} has a test named "${name}"`,
      ).toBe(true);
    },
  );

  it('says why for each rule without a test', () => {
    for (const row of rows.filter((r) => r.test.startsWith('—')))
      expect(
        row.emulator.startsWith('not modelled:') || /^— \(.+\)$/.test(row.test),
        `docs/local.md:${row.line}: a rule without a test says why (in its test cell, or "not modelled: …")`,
      ).toBe(true);
  });
});
