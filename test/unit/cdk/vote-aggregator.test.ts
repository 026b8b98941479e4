import { Match, Template } from 'aws-cdk-lib/assertions';
import { Duration } from 'aws-cdk-lib/core';
import { describe, expect, it } from 'vitest';
import { VoteAggregator } from '../../../src/cdk.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { granting, inlineCode, newStack, streamTable } from './stack.js';

describe('VoteAggregator', () => {
  it('runs on its schedule with the poll layout, reaching only that poll’s items and writing only totals', () => {
    const stack = newStack();
    new VoteAggregator(stack, 'Votes', {
      table: streamTable(stack),
      function: { code: inlineCode() },
      poll: 'final-2026',
      shards: 20,
      rate: Duration.minutes(5),
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          TABLE_NAME: { Ref: Match.stringLikeRegexp('^Table') },
          POLL: 'final-2026',
          SHARDS: '20',
          REGISTRY_PARTITIONS: '4',
        }),
      },
    });
    const tableArn = { 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'Arn'] };
    const [read] = granting(template, 'dynamodb:Query');
    expect(read).toMatchObject({
      Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
      Resource: tableArn,
      Condition: {
        'ForAllValues:StringLike': {
          'dynamodb:LeadingKeys': [
            'POLL#final-2026#CONFIG',
            'POLL#final-2026#REGISTRY#*',
            'POLL#final-2026#VOTE#*',
            'POLL#final-2026#TOTALS#*',
          ],
        },
      },
    });
    expect(granting(template, 'dynamodb:UpdateItem')).toEqual([
      expect.objectContaining({
        Resource: tableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['POLL#final-2026#TOTALS#*'] } },
      }),
    ]);
    // The voter markers (who voted for whom) are out of reach.
    expect(JSON.stringify(template.toJSON())).not.toContain('VOTER');
  });

  it('refuses a poll id that would be a wildcard in the role’s condition', () => {
    const stack = newStack();
    const table = streamTable(stack);
    for (const poll of ['*', 'a?', 'p#1', '']) {
      expect(
        () => new VoteAggregator(stack, `V${poll}`, { table, function: { code: inlineCode() }, poll }),
      ).toThrow(InvalidOptionsError);
    }
    expect(
      () => new VoteAggregator(stack, 'W', { table, function: { code: inlineCode() }, poll: 'p*' }),
    ).toThrow(/VoteAggregator: option 'poll' must be a poll id matching/);
  });
});
