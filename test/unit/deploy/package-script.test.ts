import { describe, expect, it } from 'vitest';
// @ts-expect-error scripts/package.js is plain JavaScript without declarations
import { templateProblems } from '../../../scripts/package.js';

const templateWith = (variables: Record<string, unknown>) => ({
  Resources: { AggregateVotesLambdaFunction: { Properties: { Environment: { Variables: variables } } } },
});
const good = { TABLE_NAME: { Ref: 'RecordsTable' }, POLL: 'final-2026', SHARDS: 10, REGISTRY_PARTITIONS: 4 };

describe('npm run package: settings checks on the packaged template', () => {
  it('accepts a poll id of letters, digits, `.`, `_`, `-` and positive layout numbers', () => {
    expect(templateProblems(templateWith(good))).toEqual([]);
    expect(templateProblems(templateWith({ ...good, SHARDS: '25' }))).toEqual([]);
  });

  it('refuses a poll id with an IAM wildcard or a key separator', () => {
    for (const poll of ['*', 'final?', 'a#b', '']) {
      const problems: string[] = templateProblems(templateWith({ ...good, POLL: poll }));
      expect(problems, poll).toHaveLength(1);
      expect(problems[0]).toMatch(/TIDEWATER_POLL/);
    }
  });

  it('refuses a missing or non-positive layout', () => {
    expect(templateProblems(templateWith({ ...good, SHARDS: undefined }))).toEqual([
      expect.stringMatching(/^SHARDS/),
    ]);
    expect(templateProblems(templateWith({ ...good, REGISTRY_PARTITIONS: 0 }))).toEqual([
      expect.stringMatching(/^REGISTRY_PARTITIONS/),
    ]);
    expect(templateProblems({ Resources: {} })).toHaveLength(1);
  });
});
