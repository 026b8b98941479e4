// The queues the constructs create (on-failure, dead letters): encrypted (SQS-managed, or the given
// KMS key), TLS-only, and keeping a message 14 days, SQS's longest, for whoever redrives it.

import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Duration } from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';

export function secureQueue(scope: Construct, id: string, key: kms.IKey | undefined): sqs.Queue {
  return new sqs.Queue(scope, id, {
    encryption: key === undefined ? sqs.QueueEncryption.SQS_MANAGED : sqs.QueueEncryption.KMS,
    encryptionMasterKey: key,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
}
