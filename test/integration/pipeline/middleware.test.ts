import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createStreamHandler, type PipelineLogger, ttlHealth } from '../../../src/pipeline/index.js';
import { toLambdaRecord } from '../../../src/records/convert.js';
import type { TtlDeleteRecord, UserDeleteRecord } from '../../../src/records/types.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import { createTestTable, localClients, readStreamUntil } from '../../support/aws.js';

const { dynamodb, streams } = localClients();

describe('createStreamHandler on a real DynamoDB Local stream', () => {
  it('routes TTL deletes and user deletes to different sinks, and reports a failing sink by sequence number', async () => {
    const table = await createTestTable(dynamodb, { ttlAttribute: 'expiresAt' });
    try {
      const past = Math.floor(Date.now() / 1000) - 60;
      const put = (pk: string, extra: Record<string, { N: string }> = {}) =>
        dynamodb.send(new PutItemCommand({ TableName: table.tableName, Item: { pk: { S: pk }, ...extra } }));
      await put('expired', { expiresAt: { N: String(past) } });
      await put('deleted-by-user');
      await put('forever', { expiresAt: { N: String(Date.now()) } });
      await dynamodb.send(
        new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: 'deleted-by-user' } } }),
      );
      const read = await readStreamUntil(streams, table.streamArn, (records) =>
        records.some((r) => r.userIdentity?.Type === 'Service'),
      );
      const event = {
        Records: read.map((r) => toLambdaRecord(r, { streamArn: table.streamArn })),
      } as DynamoDBStreamEvent;
      expect(event.Records.map((r) => r.eventName).sort()).toEqual([
        'INSERT',
        'INSERT',
        'INSERT',
        'REMOVE',
        'REMOVE',
      ]);

      const ttlDeletes = new MemorySink<TtlDeleteRecord>({ name: 'ttl-archive' });
      const userDeletes = new MemorySink<UserDeleteRecord>({ name: 'user-deletes' });
      const emf: string[] = [];
      const handler = createStreamHandler({
        routes: [
          { name: 'archive', when: 'ttl-delete', to: ttlDeletes },
          { name: 'audit', when: 'user-delete', to: userDeletes },
        ],
        ttlAttribute: ttlHealth('expiresAt'),
        deadLetter: new MemoryDeadLetterSink(),
        logger: pino({ level: 'silent' }) as unknown as PipelineLogger,
        metrics: { writer: { write: (line: string) => emf.push(line) } },
      });
      const context = { awsRequestId: 'it-1', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
      const response = await handler(event, context);
      expect(response).toEqual({ batchItemFailures: [] });
      expect(ttlDeletes.records.map((r) => [r.kind, r.keys.pk])).toEqual([['ttl-delete', 'expired']]);
      expect(userDeletes.records.map((r) => [r.kind, r.keys.pk])).toEqual([
        ['user-delete', 'deleted-by-user'],
      ]);
      const metrics = JSON.parse(emf[0]!);
      // 'deleted-by-user' has no TTL attribute; 'forever' has a millisecond TTL.
      expect(metrics).toMatchObject({
        Records: 5,
        Inserts: 3,
        TtlDeletes: 1,
        UserDeletes: 1,
        TtlNeverExpires: 2,
        Unrouted: 3,
      });

      // The same stream through a handler whose archive keeps failing and has no dead-letter sink:
      // Lambda must be told to resume at the TTL delete, by its real sequence number.
      const broken = createStreamHandler({
        routes: [{ when: 'ttl-delete', to: new MemorySink({ name: 'down', failWhen: () => true }) }],
        retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
        logger: pino({ level: 'silent' }) as unknown as PipelineLogger,
        metrics: false,
      });
      const ttlRecord = event.Records.find((r) => r.userIdentity?.type === 'Service')!;
      expect(await broken(event, context)).toEqual({
        batchItemFailures: [{ itemIdentifier: ttlRecord.dynamodb!.SequenceNumber }],
      });
    } finally {
      await table.drop();
    }
  });
});
