import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRecordParser,
  EventSourceMismatchError,
  MalformedRecordError,
  NotAStreamEventError,
  parseStreamEvent,
  streamRecordsOf,
  toKinesisRecord,
} from '../../../src/records/index.js';
import { eventRecordsOf } from '../../../src/records/parse.js';
import { lambdaRecord, thrown } from './fixtures.js';

const KINESIS_ARN = 'arn:aws:kinesis:eu-west-1:123456789012:stream/orders-changes';
/** Kinesis sequence numbers are up to 129 digits; real ones are 56. */
const SEQ = '49657828409187701520019995242508390119953358325192589314';

const powertoolsEvent = JSON.parse(
  readFileSync(
    new URL('../../support/events/powertools-kinesis-dynamodb-stream.json', import.meta.url),
    'utf8',
  ),
) as { Records: { kinesis: { data: string } }[] };

function kinesisOf(changes: object, sequenceNumber = SEQ) {
  return {
    kinesis: {
      kinesisSchemaVersion: '1.0',
      partitionKey: 'ABC',
      sequenceNumber,
      data: Buffer.from(JSON.stringify(changes)).toString('base64'),
      approximateArrivalTimestamp: 1_795_330_000.5,
    },
    eventSource: 'aws:kinesis',
    eventVersion: '1.0',
    eventID: `shardId-000000000004:${sequenceNumber}`,
    eventName: 'aws:kinesis:record',
    awsRegion: 'eu-west-1',
    eventSourceARN: KINESIS_ARN,
  };
}

const parseKinesis = createRecordParser({ source: 'kinesis' });

describe('Kinesis Data Streams for DynamoDB records', () => {
  it("parse Powertools' Kinesis-DynamoDB test event: inserts of its table, images read, positions and partition keys kept", () => {
    const records = parseStreamEvent(powertoolsEvent, { source: 'kinesis' });
    expect(records.map((r) => [r.kind, r.tableName, r.keys, r.newImage, r.oldImage])).toEqual([
      [
        'insert',
        'PowertoolsEventsStack-DynamoDBTable59784FC0-8NKAMTERTAXY',
        { id: 'record-1qit2y819gi' },
        { id: 'record-1qit2y819gi', data: 'data-x6aq7ckdpgk' },
        undefined,
      ],
      [
        'insert',
        'PowertoolsEventsStack-DynamoDBTable59784FC0-8NKAMTERTAXY',
        { id: 'record-fvxn3q4q5jw' },
        { id: 'record-fvxn3q4q5jw', data: 'data-4eompjs89n5' },
        undefined,
      ],
    ]);
    const [first] = records;
    expect(first!.sequenceNumber).toBe('49657828409187701520019995242508390119953358325192589314');
    expect(first!.eventID).toBe('d9428029-0f63-4056-86da-ce10d545b1b9');
    expect(first!.shardId).toBe('shardId-000000000000');
    expect(first!.awsRegion).toBe('eu-west-1');
    expect(first!.approximateCreationTime).toBe(1_731_924_555);
    expect(first!.origin).toEqual({
      source: 'kinesis',
      sequenceNumber: '49657828409187701520019995242508390119953358325192589314',
      partitionKey: '859F7C064A4818874FA67ABEC9BF2AF1',
      creationTime: 1_731_924_555_370,
      precision: 'MILLISECOND',
    });
    expect(first!.raw.dynamodb.SequenceNumber).toBe(first!.sequenceNumber);
  });

  it('classify each kind by the stream rule; a TTL delete is the DynamoDB service principal', () => {
    const kinds = (['insert', 'modify', 'user-delete', 'ttl-delete'] as const).map((kind) => {
      const base = lambdaRecord();
      const record =
        kind === 'insert'
          ? lambdaRecord({ eventName: 'INSERT', userIdentity: undefined })
          : kind === 'modify'
            ? lambdaRecord({ eventName: 'MODIFY', userIdentity: undefined })
            : kind === 'user-delete'
              ? lambdaRecord({ userIdentity: undefined })
              : base;
      return parseKinesis(toKinesisRecord(record, { sequenceNumber: SEQ, tableName: 'Orders' })).kind;
    });
    expect(kinds).toEqual(['insert', 'modify', 'user-delete', 'ttl-delete']);
  });

  it('keep images lossless (38-digit numbers, binary) and read the creation time at microsecond precision', () => {
    const record = parseKinesis(
      toKinesisRecord(lambdaRecord(), {
        sequenceNumber: SEQ,
        tableName: 'Orders',
        precision: 'MICROSECOND',
        creationTime: 1_795_330_000_123_456,
      }),
    );
    expect(String(record.oldImage!.total)).toBe('12345678901234567890.123456789');
    expect(record.oldImage!.blob).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(record.approximateCreationTime).toBe(1_795_330_000);
    expect(record.origin).toMatchObject({ creationTime: 1_795_330_000_123_456, precision: 'MICROSECOND' });
    expect(record.tableName).toBe('Orders');
    expect(record.eventSourceARN).toBeUndefined();
  });

  it('round-trip any change through toKinesisRecord: same kind, keys, images and sequence number', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('INSERT', 'MODIFY', 'REMOVE' as const),
        fc.string(),
        fc.bigInt({ min: 0n, max: 10n ** 60n }),
        fc.constantFrom('MILLISECOND', 'MICROSECOND' as const),
        (eventName, pk, n, precision) => {
          const seq = n.toString();
          const digits = (n % 10n ** 38n).toString();
          const source = lambdaRecord({
            eventName,
            userIdentity: undefined,
            dynamodb: {
              ApproximateCreationDateTime: 1_795_330_000,
              Keys: { pk: { S: pk } },
              NewImage: { pk: { S: pk }, n: { N: digits } },
              SequenceNumber: '1',
            },
          });
          const record = parseKinesis(
            toKinesisRecord(source, {
              sequenceNumber: seq,
              tableName: 't',
              precision,
              streamArn: KINESIS_ARN,
            }),
          );
          expect(record.sequenceNumber).toBe(seq);
          expect(record.eventName).toBe(eventName);
          expect(record.keys).toEqual({ pk });
          expect(String(record.newImage!.n)).toBe(digits);
          expect(record.approximateCreationTime).toBe(1_795_330_000);
        },
      ),
    );
  });

  it.each([
    ['not base64', (k: ReturnType<typeof kinesisOf>) => Object.assign(k.kinesis, { data: 'not base64!' })],
    [
      'not JSON',
      (k: ReturnType<typeof kinesisOf>) =>
        Object.assign(k.kinesis, { data: Buffer.from('{"a":').toString('base64') }),
    ],
    [
      'not a DynamoDB change record',
      (k: ReturnType<typeof kinesisOf>) =>
        Object.assign(k.kinesis, { data: Buffer.from('{"orderId":1}').toString('base64') }),
    ],
  ])('refuse data that is %s: a MalformedRecordError with the Kinesis sequence number', (_, spoil) => {
    const envelope = kinesisOf({});
    spoil(envelope);
    const error = thrown(() => parseKinesis(envelope));
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect(error).toMatchObject({ reason: 'invalid-kinesis-data', sequenceNumber: SEQ });
  });

  it('refuse a creation time of no known precision (seconds, nanoseconds, missing)', () => {
    for (const created of [1_795_330_000, 1_795_330_000_000_000_000, undefined, '1795330000000']) {
      const base = JSON.parse(
        Buffer.from(
          toKinesisRecord(lambdaRecord(), { sequenceNumber: SEQ, tableName: 'Orders' }).kinesis.data,
          'base64',
        ).toString(),
      );
      base.dynamodb.ApproximateCreationDateTime = created;
      const error = thrown(() => parseKinesis(kinesisOf(base)));
      expect(error).toMatchObject({
        name: 'MalformedRecordError',
        reason: 'invalid-creation-time',
        sequenceNumber: SEQ,
      });
    }
  });

  it('refuse a bad image inside good data with the record identity and path', () => {
    const change = lambdaRecord({ eventName: 'INSERT', userIdentity: undefined });
    change.dynamodb.NewImage = { pk: { S: 'a' }, n: { N: 'twelve' } };
    const error = thrown(() =>
      createRecordParser({ source: 'kinesis', validate: true })(
        toKinesisRecord(change, { sequenceNumber: SEQ, tableName: 'Orders' }),
      ),
    );
    expect(error).toMatchObject({
      reason: 'invalid-number',
      sequenceNumber: SEQ,
      path: 'dynamodb.NewImage.n',
    });
  });
});

describe('batch source', () => {
  const kinesisBatch = { Records: [kinesisOf({})] };
  const streamBatch = { Records: [lambdaRecord()] };

  it('a Kinesis batch for a stream handler, or the reverse, or a mix, is an EventSourceMismatchError', () => {
    expect(() => streamRecordsOf(kinesisBatch)).toThrow(EventSourceMismatchError);
    expect(() => eventRecordsOf(streamBatch, 'kinesis')).toThrow(EventSourceMismatchError);
    const mixed = { Records: [kinesisOf({}), lambdaRecord()] };
    const error = thrown(() => eventRecordsOf(mixed, 'auto'));
    expect(error).toBeInstanceOf(EventSourceMismatchError);
    expect(error).toMatchObject({ expected: 'aws:kinesis', got: 'aws:dynamodb' });
    expect(error).toBeInstanceOf(NotAStreamEventError);
  });

  it("'auto' takes the first record's source; another service's batch is not a stream event", () => {
    expect(eventRecordsOf(kinesisBatch, 'auto').source).toBe('kinesis');
    expect(eventRecordsOf(streamBatch, 'auto').source).toBe('dynamodb-stream');
    const sqs = { Records: [{ eventSource: 'aws:sqs', body: '{}' }] };
    const error = thrown(() => eventRecordsOf(sqs, 'auto'));
    expect(error).toBeInstanceOf(NotAStreamEventError);
    expect(error).not.toBeInstanceOf(EventSourceMismatchError);
  });
});
