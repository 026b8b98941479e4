// The alarms the constructs ship (docs/cdk.md, "Alarms": what each means and what to do). Each
// has no action: subscribe the ones you want (`alarm.addAlarmAction(new SnsAction(topic))`).
// Missing data is not breaching: a quiet stream is not an incident.

import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Duration } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';

function above(
  scope: Construct,
  id: string,
  metric: cloudwatch.IMetric,
  threshold: number,
  evaluationPeriods: number,
  description: string,
): cloudwatch.Alarm {
  return new cloudwatch.Alarm(scope, id, {
    metric,
    threshold,
    evaluationPeriods,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: description,
  });
}

/**
 * The age of the newest record the mapping read, at the end of each batch, above `threshold` for
 * five minutes: the function falls behind its stream, and records near the stream's 24 hours (or
 * the mapping's record age limit) are about to be given up on.
 */
export function iteratorAgeAlarm(
  scope: Construct,
  fn: lambda.IFunction,
  threshold: Duration,
): cloudwatch.Alarm {
  const metric = fn.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) });
  return above(
    scope,
    'IteratorAgeAlarm',
    metric,
    threshold.toMilliseconds(),
    5,
    `the function falls behind its table's stream (IteratorAge above ${threshold.toHumanString()} for 5 minutes)`,
  );
}

/**
 * Records the mapping sent to its on-failure destination (the mapping's event-count metric
 * OnFailureDestinationDeliveredEventCount): Lambda gave up on them, and they are not processed.
 */
export function onFailureDeliveriesAlarm(scope: Construct, mappingId: string): cloudwatch.Alarm {
  const metric = new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName: 'OnFailureDestinationDeliveredEventCount',
    dimensionsMap: { EventSourceMappingUUID: mappingId },
    statistic: 'Sum',
    period: Duration.minutes(5),
  });
  return above(
    scope,
    'OnFailureDeliveriesAlarm',
    metric,
    0,
    1,
    'the stream mapping gave up on records (retries or record age exhausted) and sent them to its on-failure destination',
  );
}

/**
 * Lambda could not write to the on-failure destination (DestinationDeliveryFailures): the records
 * it gave up on are gone from the mapping, and not even their position was kept.
 */
export function destinationDeliveryFailuresAlarm(scope: Construct, fn: lambda.IFunction): cloudwatch.Alarm {
  const metric = fn.metric('DestinationDeliveryFailures', { statistic: 'Sum', period: Duration.minutes(5) });
  return above(
    scope,
    'DestinationDeliveryFailuresAlarm',
    metric,
    0,
    1,
    'Lambda could not deliver given-up records to the on-failure destination: their positions are lost',
  );
}

/** Messages waiting in `queue` (ApproximateNumberOfMessagesVisible above 0). */
export function queueDepthAlarm(
  scope: Construct,
  id: string,
  queue: sqs.IQueue,
  description: string,
): cloudwatch.Alarm {
  const metric = queue.metricApproximateNumberOfMessagesVisible({
    statistic: 'Maximum',
    period: Duration.minutes(5),
  });
  return above(scope, id, metric, 0, 1, description);
}
