import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  patternWarnings,
  toFilterCriteria,
  toServerlessFilterPatterns,
} from '../../../src/filters/index.js';
import { StreamEventBuilder } from '../../../src/local/emulator/events.js';

// Lambda developer guide, "Control which events Lambda sends to your function": a DynamoDB record
// reaches the filter as DynamoDB JSON, numbers as strings ({"N": "42"}), and the numeric operator
// compares JSON numbers only. Lambda accepts such a pattern; it silently keeps nothing.
const numericOnN = { dynamodb: { NewImage: { price: { N: [{ numeric: ['>', 10] }] } } } };

describe('patternWarnings', () => {
  it('numeric on an N attribute never matches a real record: warned, with the path', () => {
    const record = new StreamEventBuilder().insert({ pk: 'a', price: 99 });
    expect(compilePattern(numericOnN)(record)).toBe(false);
    expect(patternWarnings(numericOnN)).toEqual([
      expect.stringMatching(/^dynamodb\.NewImage\.price\.N\[0\]: numeric never matches an? N value/),
    ]);
  });

  it('also names number literals and numeric anything-but, in keys, images, nested maps and $or, given as JSON text too', () => {
    const pattern = {
      dynamodb: {
        Keys: { sk: { N: [42] } },
        OldImage: { address: { M: { zip: { S: [{ 'anything-but': [12345] }] } } } },
        $or: [{ NewImage: { qty: { N: [{ numeric: ['=', 1] }] } } }, { NewImage: { on: { BOOL: [true] } } }],
      },
    };
    expect(patternWarnings(JSON.stringify(pattern))).toEqual([
      expect.stringMatching(/^dynamodb\.Keys\.sk\.N\[0\]: 42 never matches/),
      expect.stringMatching(
        /^dynamodb\.OldImage\.address\.M\.zip\.S\[0\]: a numeric anything-but excludes nothing/,
      ),
      expect.stringMatching(/^dynamodb\.NewImage\.qty\.N\[0\]: numeric never matches/),
    ]);
  });

  it('has nothing to say about conditions that work', () => {
    const fine = {
      eventName: ['REMOVE'],
      dynamodb: { NewImage: { price: { N: ['42', { prefix: '4' }] }, on: { BOOL: [true] } } },
    };
    expect(patternWarnings(fine)).toEqual([]);
    expect(patternWarnings('not json')).toEqual([]);
  });
});

describe('toFilterCriteria / toServerlessFilterPatterns onWarning', () => {
  it('pass the pattern through and report the never-matching condition', () => {
    const warnings: string[] = [];
    const criteria = toFilterCriteria(numericOnN, { onWarning: (m) => warnings.push(m) });
    expect(criteria).toEqual({ Filters: [{ Pattern: JSON.stringify(numericOnN) }] });
    toServerlessFilterPatterns([{ eventName: ['INSERT'] }, numericOnN], {
      onWarning: (m) => warnings.push(m),
    });
    expect(warnings).toEqual([
      expect.stringMatching(/^filter 0: dynamodb\.NewImage\.price\.N\[0\]: numeric never matches/),
      expect.stringMatching(/^filter 1: dynamodb\.NewImage\.price\.N\[0\]: numeric never matches/),
    ]);
  });

  it('refuses an onWarning that is not a function', () => {
    expect(() => toFilterCriteria(numericOnN, { onWarning: 'log' as never })).toThrow(/onWarning/);
  });
});
