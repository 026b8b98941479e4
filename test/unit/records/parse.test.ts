import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, TidewaterError } from '../../../src/core/errors.js';
import {
  classifyRecord,
  createRecordParser,
  MalformedRecordError,
  NotAStreamEventError,
  NumberValue,
  parseStreamEvent,
  parseStreamRecord,
  streamRecordsOf,
  toGetRecordsRecord,
  toLambdaRecord,
} from '../../../src/records/index.js';
import { createStreamRecordParser } from '../../../src/records/parse.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';
import { lambdaRecord, STREAM_ARN, sdkRecord } from './fixtures.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

const userIdentity = undefined;

describe('parseStreamRecord: the Lambda shape', () => {
  it('exposes identity, time, size, table and region, and keeps the record itself as raw', () => {
    const source = lambdaRecord();
    const record = parseStreamRecord(source);
    expect(record).toMatchObject({
      kind: 'ttl-delete',
      eventID: source.eventID,
      eventName: 'REMOVE',
      sequenceNumber: '4421584500000000017450439091',
      approximateCreationTime: 1_795_330_000,
      sizeBytes: 96,
      eventSourceARN: STREAM_ARN,
      tableName: 'Orders',
      awsRegion: 'eu-west-1',
      shardId: undefined,
    });
    expect(record.raw).toBe(source);
    expect(record.keys).toStrictEqual({ pk: 'order#1' });
    expect(record.newImage).toBeUndefined();
    expect(record.oldImage).toStrictEqual({
      pk: 'order#1',
      total: new NumberValue('12345678901234567890.123456789'),
      blob: new Uint8Array([0, 1, 2, 255]),
      expiresAt: 1795329990,
    });
  });

  it('unmarshals images once, on first access, and never as {} when absent', () => {
    const record = parseStreamRecord(
      lambdaRecord({
        eventName: 'INSERT',
        userIdentity,
        dynamodb: { Keys: { pk: { S: 'k' } }, SequenceNumber: '1', StreamViewType: 'KEYS_ONLY' },
      }),
    );
    expect(record.kind).toBe('insert');
    expect(record.newImage).toBeUndefined();
    expect(record.oldImage).toBeUndefined();
    expect(record.keys).toBe(record.keys);
    const withImage = parseStreamRecord(lambdaRecord({ eventName: 'MODIFY' }));
    expect(withImage.oldImage).toBe(withImage.oldImage);
  });

  it('applies the number policy to images', () => {
    const record = parseStreamRecord(lambdaRecord(), { numbers: 'string' });
    expect(record.oldImage?.expiresAt).toBe('1795329990');
  });

  it('JSON carries identity and the raw record, never unmarshalled values', () => {
    const json = JSON.parse(JSON.stringify(parseStreamRecord(lambdaRecord())));
    expect(json).toMatchObject({ kind: 'ttl-delete', tableName: 'Orders', raw: lambdaRecord() });
  });
});

describe('parseStreamRecord: the GetRecords (SDK) shape', () => {
  it('normalizes to the Lambda shape, with the ARN and shard from the options', () => {
    const record = parseStreamRecord(sdkRecord(), { streamArn: STREAM_ARN, shardId: 'shardId-0001' });
    expect(record.kind).toBe('ttl-delete');
    expect(record.approximateCreationTime).toBe(1_795_330_000);
    expect(record.tableName).toBe('Orders');
    expect(record.shardId).toBe('shardId-0001');
    expect(record.oldImage?.blob).toStrictEqual(new Uint8Array([0, 1, 2, 255]));
    expect(record.raw).toStrictEqual(lambdaRecord());
  });

  it('a GetRecords record without a stream ARN has no table name but parses', () => {
    const record = parseStreamRecord(sdkRecord());
    expect(record.tableName).toBeUndefined();
    expect(record.eventSourceARN).toBeUndefined();
    expect(record.raw.eventSourceARN).toBeUndefined();
    expect(record.raw.userIdentity).toStrictEqual({ type: 'Service', principalId: 'dynamodb.amazonaws.com' });
  });

  it('does not modify the input', () => {
    const input = sdkRecord();
    const before = structuredClone(input);
    void parseStreamRecord(input, { streamArn: STREAM_ARN }).raw;
    expect(input).toStrictEqual(before);
  });
});

describe('toLambdaRecord / toGetRecordsRecord', () => {
  it('convert between the shapes losslessly, both ways', () => {
    const lambda = toLambdaRecord(sdkRecord() as never, { streamArn: STREAM_ARN });
    expect(lambda).toStrictEqual(lambdaRecord());
    expect(toGetRecordsRecord(lambda)).toStrictEqual(sdkRecord());
    expect(toLambdaRecord(lambda, { streamArn: STREAM_ARN })).toStrictEqual(lambda);
  });

  it('take the region from the ARN or the option when the record has none', () => {
    const { awsRegion: _, ...rest } = sdkRecord();
    expect(toLambdaRecord(rest as never, { streamArn: STREAM_ARN }).awsRegion).toBe('eu-west-1');
    expect(toLambdaRecord(rest as never, { streamArn: STREAM_ARN, awsRegion: 'ddblocal' }).awsRegion).toBe(
      'ddblocal',
    );
  });

  it('validate their options', () => {
    expect(() => toLambdaRecord(sdkRecord() as never, {} as never)).toThrow(InvalidOptionsError);
    expect(() =>
      toLambdaRecord(sdkRecord() as never, { streamArn: STREAM_ARN, region: 'x' } as never),
    ).toThrow(/unknown option 'region'/);
  });
});

describe('classifyRecord', () => {
  const remove = (ui: LambdaStreamRecord['userIdentity']) => lambdaRecord({ userIdentity: ui });

  it('TTL delete only with the Service identity of dynamodb.amazonaws.com', () => {
    expect(classifyRecord(remove({ type: 'Service', principalId: 'dynamodb.amazonaws.com' }))).toBe(
      'ttl-delete',
    );
    expect(classifyRecord(remove({ type: 'Service', principalId: 'other.amazonaws.com' }))).toBe(
      'user-delete',
    );
    expect(classifyRecord(remove({ type: 'User', principalId: 'dynamodb.amazonaws.com' }))).toBe(
      'user-delete',
    );
    expect(classifyRecord(remove(undefined))).toBe('user-delete');
    expect(classifyRecord(sdkRecord())).toBe('ttl-delete');
    expect(classifyRecord(lambdaRecord({ eventName: 'INSERT' }))).toBe('insert');
    expect(classifyRecord(lambdaRecord({ eventName: 'MODIFY' }))).toBe('modify');
  });

  it('the opt-in heuristic marks a replica REMOVE whose TTL had passed', () => {
    const options = { ttlHeuristic: { ttlAttribute: 'expiresAt' } };
    expect(classifyRecord(remove(undefined), options)).toBe('ttl-delete');
    expect(parseStreamRecord(remove(undefined), options).kind).toBe('ttl-delete');
    const notYet = lambdaRecord({ userIdentity });
    notYet.dynamodb.OldImage = { ...notYet.dynamodb.OldImage, expiresAt: { N: '1795330001' } };
    expect(classifyRecord(notYet, options)).toBe('user-delete');
    const ancient = lambdaRecord({ userIdentity });
    ancient.dynamodb.OldImage = {
      ...ancient.dynamodb.OldImage,
      expiresAt: { N: String(1_795_330_000 - 6 * 365 * 86_400) },
    };
    expect(classifyRecord(ancient, options)).toBe('user-delete');
    const stringTtl = lambdaRecord({ userIdentity });
    stringTtl.dynamodb.OldImage = { ...stringTtl.dynamodb.OldImage, expiresAt: { S: '1795329990' } };
    expect(classifyRecord(stringTtl, options)).toBe('user-delete');
    // An explicit user identity is never overridden by the heuristic.
    expect(classifyRecord(remove({ type: 'User', principalId: 'AIDA' }), options)).toBe('user-delete');
  });

  it('validates options and the event name', () => {
    expect(() => classifyRecord(lambdaRecord(), { ttlHeuristic: { attribute: 'x' } } as never)).toThrow(
      InvalidOptionsError,
    );
    expect(() => classifyRecord(lambdaRecord(), { ttlHeuristic: { ttlAttribute: '' } })).toThrow(
      InvalidOptionsError,
    );
    const error = thrown(() => classifyRecord({ ...lambdaRecord(), eventName: 'DELETE' }));
    expect(error).toMatchObject({ name: 'MalformedRecordError', reason: 'unknown-event-name' });
  });
});

describe('malformed records', () => {
  const base = lambdaRecord();
  const cases: [string, unknown, string, string | undefined][] = [
    ['not an object', 'INSERT', 'not-an-object', undefined],
    ['no eventID', { ...base, eventID: undefined }, 'missing-event-id', undefined],
    ['unknown eventName', { ...base, eventName: 'UPSERT' }, 'unknown-event-name', base.eventID],
    ['no dynamodb', { ...base, dynamodb: undefined }, 'missing-dynamodb', base.eventID],
    [
      'no sequence number',
      { ...base, dynamodb: { ...base.dynamodb, SequenceNumber: 7 } },
      'missing-sequence-number',
      base.eventID,
    ],
    ['no keys', { ...base, dynamodb: { ...base.dynamodb, Keys: undefined } }, 'missing-keys', base.eventID],
    [
      'image not a map',
      { ...base, dynamodb: { ...base.dynamodb, NewImage: [] } },
      'invalid-field',
      base.eventID,
    ],
    [
      'bad timestamp',
      { ...base, dynamodb: { ...base.dynamodb, ApproximateCreationDateTime: 'yesterday' } },
      'invalid-creation-time',
      base.eventID,
    ],
    [
      'a creation time in milliseconds',
      { ...base, dynamodb: { ...base.dynamodb, ApproximateCreationDateTime: 1_795_330_000_000 } },
      'invalid-creation-time',
      base.eventID,
    ],
    [
      'a creation time before 2000',
      { ...base, dynamodb: { ...base.dynamodb, ApproximateCreationDateTime: 86_400 } },
      'invalid-creation-time',
      base.eventID,
    ],
    [
      'a Date past 2100',
      {
        ...base,
        dynamodb: { ...base.dynamodb, ApproximateCreationDateTime: new Date('2100-01-01T00:00:00Z') },
      },
      'invalid-creation-time',
      base.eventID,
    ],
    [
      'a sequence number that is not digits',
      { ...base, dynamodb: { ...base.dynamodb, SequenceNumber: '4421584500000000017450439091x' } },
      'invalid-sequence-number',
      base.eventID,
    ],
    [
      'a sequence number longer than 40 digits',
      { ...base, dynamodb: { ...base.dynamodb, SequenceNumber: '1'.repeat(41) } },
      'invalid-sequence-number',
      base.eventID,
    ],
  ];

  it.each(cases)('%s → MalformedRecordError with the identity', (_, input, reason, eventID) => {
    const error = thrown(() => parseStreamRecord(input));
    expect(error).toBeInstanceOf(MalformedRecordError);
    expect(error).toBeInstanceOf(TidewaterError);
    expect(error).toMatchObject({ name: 'MalformedRecordError', reason, eventID });
    if (reason === 'invalid-sequence-number') {
      // The record's own (bad) sequence number identifies it.
      expect(error).toMatchObject({ sequenceNumber: (input as typeof base).dynamodb.SequenceNumber });
    } else if (
      eventID !== undefined &&
      reason !== 'missing-sequence-number' &&
      reason !== 'missing-dynamodb'
    ) {
      expect(error).toMatchObject({ sequenceNumber: base.dynamodb.SequenceNumber });
      expect((error as Error).message).toContain(base.dynamodb.SequenceNumber);
    }
  });

  const badImages: [string, Record<string, unknown>, string, string][] = [
    ['zero type keys', { a: {} }, 'invalid-attribute-value', 'dynamodb.NewImage.a'],
    ['two type keys', { a: { S: 'x', N: '1' } }, 'invalid-attribute-value', 'dynamodb.NewImage.a'],
    [
      'an N that is not a number',
      { m: { M: { n: { N: '12abc' } } } },
      'invalid-number',
      'dynamodb.NewImage.m.n',
    ],
  ];

  it.each(badImages)(
    'an image with %s throws MalformedRecordError on access, with the record identity',
    (_, image, reason, path) => {
      const input = { ...base, eventName: 'INSERT', dynamodb: { ...base.dynamodb, NewImage: image } };
      const record = parseStreamRecord(input);
      const error = thrown(() => record.newImage);
      expect(error).toMatchObject({
        name: 'MalformedRecordError',
        reason,
        path,
        eventID: base.eventID,
        sequenceNumber: base.dynamodb.SequenceNumber,
      });
      expect((error as Error).cause).toMatchObject({ name: 'InvalidAttributeValueError' });
    },
  );

  it.each(badImages)('with eager: true an image with %s fails the parse itself', (_, image, reason) => {
    const input = { ...base, eventName: 'INSERT', dynamodb: { ...base.dynamodb, NewImage: image } };
    expect(thrown(() => parseStreamRecord(input, { eager: true }))).toMatchObject({
      name: 'MalformedRecordError',
      reason,
      eventID: base.eventID,
    });
  });
});

describe('parseStreamEvent', () => {
  it('accepts a Lambda event, a GetRecords output, an array or one record', () => {
    const r = lambdaRecord();
    expect(parseStreamEvent({ Records: [r, r] })).toHaveLength(2);
    expect(
      parseStreamEvent({ Records: [sdkRecord()], NextShardIterator: 'it' }, { streamArn: STREAM_ARN })[0]
        ?.raw,
    ).toStrictEqual(r);
    expect(parseStreamEvent({ NextShardIterator: 'it', $metadata: {}, Records: undefined })).toStrictEqual(
      [],
    );
    expect(parseStreamEvent([r])).toHaveLength(1);
    expect(parseStreamEvent(r)[0]?.kind).toBe('ttl-delete');
    expect(parseStreamEvent({ Records: [] })).toStrictEqual([]);
  });

  it('keeps the order of the batch', () => {
    const records = ['INSERT', 'MODIFY', 'REMOVE'].map((eventName, i) =>
      lambdaRecord({
        eventName: eventName as 'INSERT',
        userIdentity,
        eventID: `e${i}`,
        dynamodb: { Keys: { pk: { S: 'k' } }, SequenceNumber: String(100 + i) },
      }),
    );
    expect(parseStreamEvent({ Records: records }).map((r) => [r.kind, r.sequenceNumber])).toEqual([
      ['insert', '100'],
      ['modify', '101'],
      ['user-delete', '102'],
    ]);
  });

  it.each([
    ['null', null],
    ['a string', 'event'],
    ['an object without Records', { detail: {} }],
    ['Records not an array', { Records: {} }],
    ['an SQS batch', { Records: [{ messageId: '1', eventSource: 'aws:sqs', body: '{}' }] }],
    ['an SNS batch', { Records: [{ EventSource: 'aws:sns', Sns: {} }] }],
  ])('%s → NotAStreamEventError', (_, input) => {
    const error = thrown(() => parseStreamEvent(input));
    expect(error).toBeInstanceOf(NotAStreamEventError);
    expect(error).toMatchObject({ name: 'NotAStreamEventError' });
    expect(() => streamRecordsOf(input)).toThrow(NotAStreamEventError);
  });

  it('throws the first malformed record', () => {
    const bad = { ...lambdaRecord(), eventID: 'bad-one', eventName: 'X' };
    expect(thrown(() => parseStreamEvent({ Records: [lambdaRecord(), bad] }))).toMatchObject({
      name: 'MalformedRecordError',
      eventID: 'bad-one',
    });
  });

  it('createRecordParser validates options once, and rejects typos', () => {
    expect(() => createRecordParser({ streamARN: STREAM_ARN } as never)).toThrow(
      /unknown option 'streamARN'/,
    );
    expect(() => createRecordParser({ shardId: '' })).toThrow(InvalidOptionsError);
    expect(() => createRecordParser({ eager: 'yes' as never })).toThrow(InvalidOptionsError);
    const parse = createRecordParser({ streamArn: STREAM_ARN });
    expect(parse(sdkRecord()).tableName).toBe('Orders');
  });

  it("createStreamRecordParser (the pipeline's) takes the image options only, and parses as createRecordParser does", () => {
    for (const other of [
      { source: 'kinesis' },
      { streamArn: STREAM_ARN },
      { origin: { source: 'dynamodb-stream' } },
    ]) {
      const error = thrown(() => createStreamRecordParser(other as never));
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as Error).message).toMatch(
        /^parse: unknown option '\w+' \(known: numbers, ttlHeuristic, eager, validate\)$/,
      );
    }
    expect(() => createStreamRecordParser({ validate: 'yes' as never })).toThrow(
      'parse: option \'validate\' must be a boolean, got the string "yes"',
    );
    const options = { numbers: 'string', validate: true } as const;
    const record = lambdaRecord();
    expect(JSON.stringify(createStreamRecordParser(options)(record))).toBe(
      JSON.stringify(createRecordParser(options)(record)),
    );
    expect(createStreamRecordParser(options)(record).newImage).toEqual(
      createRecordParser(options)(record).newImage,
    );
  });
});
