import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExportLineTooLongError } from '../../../src/backfill/errors.js';
import { type ExportLine, LineSplitter } from '../../../src/backfill/line-splitter.js';

const runs = { numRuns: 500, interruptAfterTimeLimit: 20_000 };

/** `text` cut into chunks at `cuts`, through one splitter: every line it gives, the last one too. */
function split(text: string, cuts: number[], maxChars = 1000): ExportLine[] {
  const splitter = new LineSplitter('data/a.json.gz', maxChars);
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: ExportLine[] = [];
  let from = 0;
  for (const to of [...at, text.length]) {
    out.push(...splitter.push(text.slice(from, to)));
    from = to;
  }
  const last = splitter.end();
  if (last !== undefined) out.push(last);
  return out;
}

/** What an editor shows: the text's lines, numbered from 1, a final `\n` ending the last one. */
function expected(text: string): ExportLine[] {
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((t, i) => ({ line: i + 1, text: t }));
}

const textWithLines = fc
  .array(fc.oneof(fc.string({ maxLength: 30 }), fc.constant(''), fc.constant('{"__proto__":1}')), {
    maxLength: 60,
  })
  .chain((lines) => fc.tuple(fc.constant(lines.join('\n')), fc.boolean()))
  .map(([t, ending]) => (ending ? `${t}\n` : t));

describe('LineSplitter', () => {
  it('gives the lines of any text however it is chunked, numbered from 1', () => {
    fc.assert(
      fc.property(textWithLines, fc.array(fc.nat(), { maxLength: 20 }), (text, cuts) => {
        expect(split(text, cuts)).toEqual(expected(text));
      }),
      runs,
    );
  });

  it('a line longer than maxChars is an ExportLineTooLongError naming it, however chunked', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 5 }),
        fc.integer({ min: 11, max: 200 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (before, long, cuts) => {
          const text = `${'ok\n'.repeat(before)}${'x'.repeat(long)}\nafter\n`;
          const error = (() => {
            try {
              split(text, cuts, 10);
            } catch (e) {
              return e;
            }
          })();
          expect(error).toBeInstanceOf(ExportLineTooLongError);
          expect((error as ExportLineTooLongError).line).toBe(before + 1);
        },
      ),
      runs,
    );
  });

  it('a flood of empty lines in many small chunks is counted in linear time', () => {
    const splitter = new LineSplitter('data/a.json.gz', 1000);
    let lines = 0;
    for (let i = 0; i < 4096; i++) lines += splitter.push('\n'.repeat(256)).length;
    expect(lines).toBe(4096 * 256);
    expect(splitter.line).toBe(4096 * 256);
  });

  it('a line arriving one character at a time is joined once', () => {
    const splitter = new LineSplitter('data/a.json.gz', 200_000);
    let early = 0;
    for (let i = 0; i < 100_000; i++) early += splitter.push('y').length;
    const [line] = splitter.push('\n');
    expect(early).toBe(0);
    expect(line?.text.length).toBe(100_000);
  });
});
