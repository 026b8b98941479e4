// Where Lambda sends a batch it gave up on (retries or record age exhausted): an SQS queue gets the
// batch's position (shard, sequence range), an S3 bucket the position and the records themselves
// (docs/redrive.md reads both back). CDK's SqsDlq and S3OnFailureDestination would grant the
// function `s3:GetObject*`, `s3:DeleteObject*`, `s3:List*` and a key's `kms:ReEncrypt*`; this one
// grants what Lambda needs to deliver, nothing more.
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Grants } from './grants.js';

/**
 * Lambda writes an S3 destination's objects under this prefix
 * (`aws/lambda/<mapping UUID>/<shard id>/YYYY/MM/DD/…`): the function's PutObject grant ends there.
 */
export const ON_FAILURE_S3_PREFIX = 'aws/lambda/';

/** An on-failure destination: a queue or a bucket. */
export type OnFailureTarget = sqs.IQueue | s3.IBucket;

export function isQueue(target: OnFailureTarget): target is sqs.IQueue {
  return 'queueArn' in target;
}

/** The mapping's IEventSourceDlq for `target`, granting the function what delivery needs. */
export class OnFailureDestination implements lambda.IEventSourceDlq {
  constructor(private readonly target: OnFailureTarget) {}

  bind(mapping: lambda.IEventSourceMapping, fn: lambda.IFunction): lambda.DlqDestinationConfig {
    const grants = new Grants(fn);
    const target = this.target;
    if (isQueue(target)) {
      // Lambda sends with the function's role; an SSE-KMS queue needs the key for that.
      grants
        .allow(['sqs:SendMessage'], [target.queueArn])
        .key(target.encryptionMasterKey, ['kms:GenerateDataKey', 'kms:Decrypt'], ['sqs']);
    } else {
      // Lambda's documented needs for an S3 destination: PutObject and ListBucket.
      grants
        .objects(target, ON_FAILURE_S3_PREFIX, ['s3:PutObject'])
        .allow(['s3:ListBucket'], [target.bucketArn])
        .key(target.encryptionKey, ['kms:GenerateDataKey'], ['s3']);
    }
    grants.before(mapping);
    return { destination: isQueue(target) ? target.queueArn : target.bucketArn };
  }
}
