import { describe, expect, it } from 'vitest';
import { ConditionCycleError } from '../../../../src/local/config/errors.js';
import { resolveIntrinsics } from '../../../../src/local/config/intrinsics.js';

const resolve = (value: unknown, conditions: Record<string, unknown>) =>
  resolveIntrinsics(value, { refs: {}, stackName: 's-dev', conditions, where: 'resources' });

describe('Conditions', () => {
  it('evaluates conditions that use other conditions, each once', () => {
    const conditions = {
      IsProd: { 'Fn::Equals': ['prod', 'prod'] },
      NotProd: { 'Fn::Not': [{ Condition: 'IsProd' }] },
      Either: { 'Fn::Or': [{ Condition: 'IsProd' }, { Condition: 'NotProd' }] },
    };
    expect(resolve({ 'Fn::If': ['Either', 'yes', 'no'] }, conditions)).toBe('yes');
  });

  it.each([
    [{ A: { 'Fn::Not': [{ Condition: 'B' }] }, B: { 'Fn::Not': [{ Condition: 'A' }] } }, ['A', 'B', 'A']],
    [{ A: { 'Fn::Not': [{ Condition: 'A' }] } }, ['A', 'A']],
    [
      {
        A: { 'Fn::And': [{ 'Fn::Equals': [1, 1] }, { Condition: 'B' }] },
        B: { 'Fn::Or': [{ Condition: 'C' }] },
        C: { 'Fn::Not': [{ Condition: 'B' }] },
      },
      ['B', 'C', 'B'],
    ],
  ])('a cycle is a ConditionCycleError naming its path, not a RangeError (%#)', (conditions, cycle) => {
    const error = (() => {
      try {
        return resolve({ 'Fn::If': ['A', 1, 2] }, conditions);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConditionCycleError);
    expect(error).toMatchObject({ name: 'ConditionCycleError', cycle });
    expect((error as Error).message).toBe(`resources: Conditions form a cycle: ${cycle.join(' → ')}`);
  });
});
