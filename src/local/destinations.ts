import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

export type FailureCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/** What Lambda sends to an on-failure destination for a stream event source (the "invocation record"). */
export interface StreamInvocationRecord {
  requestContext: {
    requestId: string;
    functionArn: string;
    condition: FailureCondition;
    approximateInvokeCount: number;
  };
  responseContext?: {
    statusCode: number;
    executedVersion: string;
    functionError?: string;
  };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
}

/** Where discarded batches' metadata goes. Lambda sends the metadata, never the records. */
export interface FailureDestination {
  send(record: StreamInvocationRecord): Promise<void>;
}

export class MemoryFailureDestination implements FailureDestination {
  readonly records: StreamInvocationRecord[] = [];
  async send(record: StreamInvocationRecord): Promise<void> {
    this.records.push(record);
  }
}

export class SqsFailureDestination implements FailureDestination {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}
  async send(record: StreamInvocationRecord): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(record) }),
    );
  }
}

/** Lambda's S3 destination writes one object per invocation record, under a dated prefix. */
export class S3FailureDestination implements FailureDestination {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly prefix = 'aws/lambda/esm-failures',
  ) {}
  async send(record: StreamInvocationRecord): Promise<void> {
    const day = record.timestamp.slice(0, 10).replaceAll('-', '/');
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: `${this.prefix}/${day}/${record.DDBStreamBatchInfo.shardId}-${record.requestContext.requestId}.json`,
        Body: JSON.stringify(record),
        ContentType: 'application/json',
      }),
    );
  }
}
