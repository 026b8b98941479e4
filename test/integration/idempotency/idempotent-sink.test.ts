// A side effect once per record under Lambda's redelivery, on Powertools' idempotency utility
// with its DynamoDB persistence layer on DynamoDB Local.
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotentHandler, idempotentSink } from '../../../src/idempotency/index.js';
import { type HandlerContext, processBatch } from '../../../src/pipeline/index.js';
import type { ClassifiedRecord, InsertRecord } from '../../../src/records/types.js';
import { createTestTable, localClients } from '../../support/aws.js';
import { batch, quiet } from '../../unit/pipeline/fixtures.js';

const { dynamodb } = localClients();
let table: Awaited<ReturnType<typeof createTestTable>>;
let persistenceStore: DynamoDBPersistenceLayer;

beforeAll(async () => {
  table = await createTestTable(dynamodb, {
    keySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    attributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
  });
  persistenceStore = new DynamoDBPersistenceLayer({ tableName: table.tableName, awsSdkV3Client: dynamodb });
});
afterAll(async () => {
  await table.drop();
  dynamodb.destroy();
});

/** A mailer that counts what it sent, by record, and can be held mid-send. */
function mailer() {
  const sent = new Map<string, number>();
  let hold: Promise<void> | undefined;
  let entered!: () => void;
  return {
    sent,
    /** Resolves when a send has started: its record is marked in progress by then. */
    started: new Promise<void>((resolve) => {
      entered = resolve;
    }),
    holdUntil(released: Promise<void>) {
      hold = released;
    },
    async send(record: ClassifiedRecord) {
      entered();
      if (hold !== undefined) await hold;
      sent.set(record.eventID, (sent.get(record.eventID) ?? 0) + 1);
      return { messageId: `m-${record.eventID}` };
    },
  };
}

describe('idempotentSink on DynamoDB Local', () => {
  it('sends one mail per INSERT however often Lambda delivers the batch', async () => {
    const mail = mailer();
    const sink = idempotentSink({
      name: `welcome-mail-${table.tableName}`,
      persistenceStore,
      send: (record) => mail.send(record),
    });
    const event = batch(5);
    const config = { ...quiet, routes: [{ when: 'insert' as const, to: sink }] };
    for (let delivery = 0; delivery < 3; delivery++)
      expect(await processBatch(event, config)).toEqual({ batchItemFailures: [] });
    expect([...mail.sent.values()]).toEqual([1, 1, 1, 1, 1]);
    // A second sink over the same records keeps its own idempotency records.
    const other = mailer();
    await processBatch(event, {
      ...quiet,
      routes: [
        {
          when: 'insert',
          to: idempotentSink({
            name: `audit-${table.tableName}`,
            persistenceStore,
            send: (r) => other.send(r),
          }),
        },
      ],
    });
    expect(other.sent.size).toBe(5);
  });

  it('fails a record redelivered while its first send is in progress, then skips it once that finished', async () => {
    const mail = mailer();
    let release!: () => void;
    mail.holdUntil(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const sink = idempotentSink({
      name: `slow-mail-${table.tableName}`,
      persistenceStore,
      send: (r) => mail.send(r),
    });
    const event = batch(2);
    const config = {
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert' as const, to: sink }],
    };
    const first = processBatch(event, config);
    await mail.started; // the first record is marked in progress, its mail not yet sent
    const overlapping = await processBatch(event, config);
    // The redelivery met the in-progress marker of the first record: it fails there (Lambda
    // would retry from it), and sends nothing.
    expect(overlapping.batchItemFailures).toEqual([
      { itemIdentifier: event.Records[0]!.dynamodb.SequenceNumber },
    ]);
    release();
    expect(await first).toEqual({ batchItemFailures: [] });
    expect(await processBatch(event, config)).toEqual({ batchItemFailures: [] });
    expect([...mail.sent.values()]).toEqual([1, 1]);
  });

  it('lets a failed send run again on the next delivery (the in-progress marker is removed)', async () => {
    let attempts = 0;
    const sink = idempotentSink({
      name: `flaky-${table.tableName}`,
      persistenceStore,
      key: 'item-change',
      send: () => {
        attempts++;
        if (attempts === 1) throw new Error('smtp down');
      },
    });
    const event = batch(1);
    const config = {
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert' as const, to: sink }],
    };
    expect((await processBatch(event, config)).batchItemFailures).toHaveLength(1);
    expect(await processBatch(event, config)).toEqual({ batchItemFailures: [] });
    expect(await processBatch(event, config)).toEqual({ batchItemFailures: [] });
    expect(attempts).toBe(2);
  });
});

describe('idempotentHandler on DynamoDB Local', () => {
  it('runs a kind handler once per record and returns the stored result on redelivery', async () => {
    const mail = mailer();
    const results: unknown[] = [];
    const insert = idempotentHandler(
      async (record: ClassifiedRecord) => {
        const sent = await mail.send(record);
        return sent;
      },
      { name: `handler-${table.tableName}`, persistenceStore },
    );
    const event = batch(3);
    const config = {
      ...quiet,
      handlers: {
        insert: async (record: InsertRecord, context: HandlerContext) =>
          void results.push(await insert(record, context)),
      },
    };
    await processBatch(event, config);
    await processBatch(event, config);
    expect([...mail.sent.values()]).toEqual([1, 1, 1]);
    expect(results).toHaveLength(6);
    expect(results.slice(3)).toEqual(results.slice(0, 3));
  });

  it('refuses options that could not work, by name', () => {
    expect(() => idempotentHandler(() => 1, { name: '', persistenceStore })).toThrow(/name/);
    expect(() => idempotentSink({ name: 'x', send: () => 1, persistenceStore: {} as never })).toThrow(
      /persistenceStore/,
    );
  });
});
