// A function run on an EventBridge schedule (compaction, the vote aggregator). The rule's
// permission to invoke is a resource policy on the function, scoped to the rule's ARN.

import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Duration } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';

export function scheduleFunction(
  scope: Construct,
  id: string,
  fn: lambda.IFunction,
  rate: Duration,
): events.Rule {
  return new events.Rule(scope, id, {
    schedule: events.Schedule.rate(rate),
    targets: [new targets.LambdaFunction(fn)],
  });
}
