import { LambdaClient } from '@aws-sdk/client-lambda';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryFailureDestination, SqsFailureDestination } from '../../../src/local/emulator/destinations.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { lambdaTarget, RedriveInvokeError, redrive } from '../../../src/redrive/index.js';
import { createTestTable, localClients, startLocalSqs } from '../../support/aws.js';
import { startLambdaServer } from './lambda-server.js';
import { fanOut, putItems, runMapping, type StateSink, sinkHandler, tableState } from './support.js';

const { dynamodb, streams } = localClients();
let local: Awaited<ReturnType<typeof startLocalSqs>>;
let lambda: Awaited<ReturnType<typeof startLambdaServer>>;
const sink: StateSink = new Map();
let broken = true;

beforeAll(async () => {
  local = await startLocalSqs();
  lambda = await startLambdaServer({
    'orders-stream': async (event) => {
      if (broken) throw new Error('still broken');
      return sinkHandler(sink)(event as never);
    },
    'orders-partial': async (event) =>
      sinkHandler(new Map(), { failAt: new Set(['k2']), report: true })(event as never),
  });
});
afterAll(async () => {
  await Promise.all([local.stop(), lambda.stop()]);
});

const client = () =>
  new LambdaClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: lambda.endpoint });

describe('lambdaTarget through a local Lambda Invoke server', () => {
  it('invokes RequestResponse with an event of Lambda shape; a function error keeps the message, the fix removes it', async () => {
    const table = await createTestTable(dynamodb);
    await putItems(table.tableName, ['k1', 'k2', 'k3']);
    const { QueueUrl } = await local.sqs.send(
      new CreateQueueCommand({ QueueName: `lambda-${table.tableName}` }),
    );
    const memory = new MemoryFailureDestination();
    await runMapping(
      table.streamArn,
      sinkHandler(new Map(), { failAt: new Set(['k1']) }),
      fanOut(memory, new SqsFailureDestination(local.sqs, QueueUrl as string)),
    );
    const options = {
      streams,
      sqs: local.sqs,
      waitTimeSeconds: 0,
      streamArn: table.streamArn,
      queueUrl: QueueUrl as string,
    };
    const target = lambdaTarget({ functionName: 'orders-stream', client: client() });

    const first = await redrive({ ...options, target });
    expect(first).toMatchObject({ messagesRead: 1, failed: 3, succeeded: 0, messagesRemoved: 0 });
    expect(first.failures[0]?.error).toBe('function error Unhandled');
    const call = lambda.invoked.at(-1);
    expect(call?.invocationType).toBe('RequestResponse');
    const event = call?.event as {
      Records: { eventSource: string; eventSourceARN: string; dynamodb: { SequenceNumber: string } }[];
    };
    expect(event.Records.map((r) => r.dynamodb.SequenceNumber)).toEqual([
      memory.records[0]?.DDBStreamBatchInfo.startSequenceNumber,
      expect.any(String),
      memory.records[0]?.DDBStreamBatchInfo.endSequenceNumber,
    ]);
    expect(event.Records[0]).toMatchObject({ eventSource: 'aws:dynamodb', eventSourceARN: table.streamArn });

    broken = false;
    const second = await redrive({ ...options, target });
    expect(second).toMatchObject({ messagesRead: 1, succeeded: 3, failed: 0, messagesRemoved: 1 });
    expect(sink).toEqual(await tableState(table.tableName));
  });

  it('reads a partial batch response from the payload', async () => {
    const target = lambdaTarget({ functionName: 'orders-partial', client: client() });
    const records = ['k1', 'k2', 'k3'].map((pk, i) => ({
      eventID: String(i),
      eventName: 'INSERT' as const,
      dynamodb: { Keys: { pk: { S: pk } }, SequenceNumber: `10${i}`, StreamViewType: 'KEYS_ONLY' as const },
    }));
    expect(await target.run(records as never)).toEqual({
      failed: ['101', '102'],
      error: 'the function reported batch item failures',
    });
  });

  it('a function that does not exist is a RedriveInvokeError naming it', async () => {
    const target = lambdaTarget({ functionName: 'missing-fn', client: client() });
    await expect(target.run([])).rejects.toThrow(RedriveInvokeError);
    await expect(target.run([])).rejects.toThrow(/missing-fn/);
  });
});
