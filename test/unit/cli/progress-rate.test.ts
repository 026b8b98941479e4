import { describe, expect, it } from 'vitest';
import { formatSeconds, progressFields } from '../../../src/cli/progress-rate.js';

describe('progressFields', () => {
  it('a 34 s run of 5000 items shows 34 s and its rate, not 0s', () => {
    expect(progressFields(5000, 1_000, 35_000)).toEqual({ elapsed: '34 s', rate: '147' });
  });

  it('no time yet: no rate; a clock that went back counts as no time', () => {
    expect(progressFields(10, 5_000, 5_000)).toEqual({ elapsed: '0 s', rate: '-' });
    expect(progressFields(10, 5_000, 4_000)).toEqual({ elapsed: '0 s', rate: '-' });
  });

  it('minutes and hours', () => {
    expect(formatSeconds(125.4)).toBe('2 min 05 s');
    expect(formatSeconds(3_720)).toBe('1 h 02 min');
  });
});
