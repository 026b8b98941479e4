import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { afterAll } from 'vitest';
import { KinesisBridge, type KinesisBridgeOptions } from '../../src/local/emulator/kinesis-bridge.js';
import { localClients, localKinesis } from './aws.js';

/** The clients a test of a table streamed to Kinesis needs, on the run's servers; destroyed after the file. */
export function kinesisTestClients() {
  const { dynamodb, streams } = localClients();
  const kinesis = localKinesis();
  afterAll(() => {
    dynamodb.destroy();
    streams.destroy();
    kinesis.destroy();
  });
  return { dynamodb, streams, kinesis };
}

/**
 * Plays a table's Kinesis streaming destination until caught up: every change on the table's
 * DynamoDB stream put on the Kinesis stream, as the tests of Kinesis-triggered functions need.
 */
export function bridgeTableToKinesis(
  clients: { streams: DynamoDBStreamsClient; kinesis: KinesisClient },
  table: { streamArn: string; tableName: string },
  kinesisStreamArn: string,
  options: Partial<KinesisBridgeOptions> = {},
) {
  return new KinesisBridge({
    streams: clients.streams,
    tableStreamArn: table.streamArn,
    tableName: table.tableName,
    kinesis: clients.kinesis,
    kinesisStreamArn,
    pollIntervalMs: 10,
    ...options,
  }).run({ stopWhenCaughtUp: true });
}
