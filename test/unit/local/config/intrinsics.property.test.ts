// Issue 36 §4: whatever template value the intrinsic evaluator meets, it gives a value or a
// tidewater error — never a raw TypeError or RangeError.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../../src/core/index.js';
import { bucketRef, resolveIntrinsics } from '../../../../src/local/config/intrinsics.js';
import { namedValues, templateValue } from './template-inputs.js';

function outcome(run: () => unknown): 'value' | 'tidewater error' {
  try {
    run();
    return 'value';
  } catch (error) {
    if (error instanceof TidewaterError) return 'tidewater error';
    throw error;
  }
}

describe('resolveIntrinsics on any template value', () => {
  it('gives a value or a tidewater error', () => {
    fc.assert(
      fc.property(templateValue, namedValues, (value, conditions) => {
        expect(
          outcome(() =>
            resolveIntrinsics(value, {
              refs: { Table: bucketRef('t', 'us-east-1'), A: bucketRef('a', 'us-east-1') },
              stackName: 's-dev',
              conditions,
              where: 'resources',
            }),
          ),
        ).toMatch(/value|tidewater error/);
      }),
      { numRuns: 2000 },
    );
  });

  it('a value nested 10,000 deep by code (no file to check): a tidewater error', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = { 'Fn::Not': [deep] };
    expect(outcome(() => resolveIntrinsics(deep, { refs: {}, stackName: 's', where: 'r' }))).toBe(
      'tidewater error',
    );
  });
});
