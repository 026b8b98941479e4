import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedriveMessageError } from '../../../src/redrive/index.js';
import { decodeRedriveMessage } from '../../../src/redrive/message.js';
import {
  DEAD_LETTER_POINTER_TYPE,
  DEAD_LETTER_TYPE,
  serializeDeadLetterEntry,
  serializeDeadLetterPointer,
} from '../../../src/sinks/dead-letter-message.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';
import { DOCUMENTED, DOCUMENTED_KINESIS } from '../../support/on-failure-record.js';

const STREAM = DOCUMENTED.DDBStreamBatchInfo.streamArn;
const KINESIS_STREAM = DOCUMENTED_KINESIS.KinesisBatchInfo.streamArn;

/** What the decoder makes of a DynamoDB stream's on-failure record. */
const fromStream = (record: typeof DOCUMENTED) => ({
  kind: 'on-failure',
  source: 'dynamodb-stream',
  info: record.DDBStreamBatchInfo,
  record,
});

function problemOf(text: string): string {
  try {
    decodeRedriveMessage(text, 'sqs:m-1', STREAM);
  } catch (error) {
    expect(error).toBeInstanceOf(RedriveMessageError);
    expect((error as RedriveMessageError).source).toBe('sqs:m-1');
    expect((error as Error).message).toContain('sqs:m-1');
    return (error as RedriveMessageError).problem;
  }
  return 'accepted';
}

const entry: DeadLetterEntry = {
  reason: 'retries-exhausted',
  record: {
    eventID: 'e1',
    eventName: 'INSERT',
    eventSourceARN: STREAM,
    dynamodb: { Keys: { pk: { S: 'a' } }, SequenceNumber: '42' },
  },
  eventID: 'e1',
  sequenceNumber: '42',
  eventSourceARN: STREAM,
  error: { name: 'Error', message: 'down' },
  attempts: 3,
  sinkName: 'index',
  at: '2026-01-02T03:04:05.000Z',
};

describe('decodeRedriveMessage', () => {
  it('reads the documented on-failure record, raw and inside an SNS notification', () => {
    const raw = JSON.stringify(DOCUMENTED);
    expect(decodeRedriveMessage(raw, 'sqs:m-1', STREAM)).toEqual(fromStream(DOCUMENTED));
    const sns = JSON.stringify({
      Type: 'Notification',
      MessageId: 'n',
      TopicArn: 'arn:aws:sns:x',
      Message: raw,
    });
    expect(decodeRedriveMessage(sns, 'sqs:m-1', STREAM)).toEqual(fromStream(DOCUMENTED));
  });

  it("reads a Kinesis mapping's on-failure record (KinesisBatchInfo) for the Kinesis stream only", () => {
    const text = JSON.stringify(DOCUMENTED_KINESIS);
    expect(decodeRedriveMessage(text, 'sqs:m-1', KINESIS_STREAM)).toEqual({
      kind: 'on-failure',
      source: 'kinesis',
      info: DOCUMENTED_KINESIS.KinesisBatchInfo,
      record: DOCUMENTED_KINESIS,
    });
    // Redriving the table's DynamoDB stream does not take the Kinesis stream's failures.
    expect(problemOf(text)).toBe('other-stream');
    // Kinesis's sequence numbers are longer than a DynamoDB stream's 40 digits, and valid there only.
    const long = '4'.repeat(56);
    const longKinesis = {
      ...DOCUMENTED_KINESIS,
      KinesisBatchInfo: {
        ...DOCUMENTED_KINESIS.KinesisBatchInfo,
        startSequenceNumber: long,
        endSequenceNumber: long,
      },
    };
    expect(decodeRedriveMessage(JSON.stringify(longKinesis), 'sqs:m-1', KINESIS_STREAM)).toMatchObject({
      source: 'kinesis',
      info: { startSequenceNumber: long },
    });
    const longStream = {
      ...DOCUMENTED,
      DDBStreamBatchInfo: {
        ...DOCUMENTED.DDBStreamBatchInfo,
        startSequenceNumber: long,
        endSequenceNumber: long,
      },
    };
    expect(problemOf(JSON.stringify(longStream))).toBe('malformed');
    const tooLong = {
      ...DOCUMENTED_KINESIS,
      KinesisBatchInfo: { ...DOCUMENTED_KINESIS.KinesisBatchInfo, startSequenceNumber: '1'.repeat(130) },
    };
    expect(() => decodeRedriveMessage(JSON.stringify(tooLong), 'sqs:m-1', KINESIS_STREAM)).toThrow(
      /KinesisBatchInfo lacks a shard, stream or sequence range/,
    );
  });

  it("reads an S3 destination's payload as the batch", () => {
    const records = [1, 2, 3].map((i) => ({ ...(entry.record as object), eventID: `e${i}` }));
    const text = JSON.stringify({ ...DOCUMENTED, payload: JSON.stringify({ Records: records }) });
    expect(decodeRedriveMessage(text, 's3://b/k', STREAM)).toMatchObject({ kind: 'on-failure', records });
    const short = JSON.stringify({ ...DOCUMENTED, payload: JSON.stringify({ Records: records.slice(1) }) });
    expect(() => decodeRedriveMessage(short, 's3://b/k', STREAM)).toThrow(/payload does not hold/);
  });

  it('reads dead-letter entries and pointers as the sinks serialize them', () => {
    expect(decodeRedriveMessage(serializeDeadLetterEntry(entry), 'sqs:m-1', STREAM)).toEqual({
      kind: 'dead-letter',
      records: [entry.record],
      sequenceNumber: '42',
      madeAt: Date.parse('2026-01-02T03:04:05.000Z'),
    });
    // An entry whose `at` is not a time says no time.
    const undated = decodeRedriveMessage(
      serializeDeadLetterEntry({ ...entry, at: 'soon' }),
      'sqs:m-1',
      STREAM,
    );
    expect(undated).toMatchObject({ kind: 'dead-letter', madeAt: undefined });
    expect(
      decodeRedriveMessage(serializeDeadLetterPointer(entry, 'bkt', 'dead-letter/k', 999), 'sqs:m-1', STREAM),
    ).toEqual({ kind: 'dead-letter-pointer', bucket: 'bkt', key: 'dead-letter/k' });
  });

  it('names another stream, an unknown version and a malformed range', () => {
    const info = DOCUMENTED.DDBStreamBatchInfo;
    expect(
      problemOf(JSON.stringify({ ...DOCUMENTED, DDBStreamBatchInfo: { ...info, streamArn: `${STREAM}x` } })),
    ).toBe('other-stream');
    expect(problemOf(serializeDeadLetterEntry({ ...entry, eventSourceARN: `${STREAM}x` }))).toBe(
      'other-stream',
    );
    expect(problemOf(JSON.stringify({ ...DOCUMENTED, version: '1.1' }))).toBe('unknown-version');
    expect(problemOf(JSON.stringify({ ...JSON.parse(serializeDeadLetterEntry(entry)), version: 2 }))).toBe(
      'unknown-version',
    );
    const reversed = {
      ...info,
      startSequenceNumber: info.endSequenceNumber,
      endSequenceNumber: info.startSequenceNumber,
    };
    expect(problemOf(JSON.stringify({ ...DOCUMENTED, DDBStreamBatchInfo: reversed }))).toBe('malformed');
    expect(
      problemOf(JSON.stringify({ ...DOCUMENTED, DDBStreamBatchInfo: { ...info, startSequenceNumber: 'x' } })),
    ).toBe('malformed');
  });

  it('any other text is a typed error naming the message, never an accepted message or a crash', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (text) => {
          expect(['malformed', 'unknown-shape']).toContain(problemOf(text));
        },
      ),
    );
  });

  it('any on-failure record with a valid range for the stream is accepted whole', () => {
    const sequence = fc.bigInt({ min: 1n, max: 10n ** 38n });
    fc.assert(
      fc.property(sequence, sequence, fc.string({ minLength: 1 }), (a, b, shardId) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        const record = {
          ...DOCUMENTED,
          DDBStreamBatchInfo: {
            ...DOCUMENTED.DDBStreamBatchInfo,
            shardId,
            startSequenceNumber: String(start),
            endSequenceNumber: String(end),
          },
        };
        expect(decodeRedriveMessage(JSON.stringify(record), 'sqs:m', STREAM)).toEqual(fromStream(record));
      }),
    );
  });

  it("checks each record's own stream, not only the envelope's: another table's or account's record is refused", () => {
    const otherTable = STREAM.replace('table/orders', 'table/payments');
    const otherAccount = STREAM.replace('123456789012', '210987654321');
    for (const arn of [otherTable, otherAccount, undefined]) {
      const record = { ...(entry.record as object), eventSourceARN: arn };
      // The envelope names the right stream, or none at all: the record inside still decides.
      expect(problemOf(serializeDeadLetterEntry({ ...entry, record: record as never }))).toBe('other-stream');
      const { eventSourceARN: _, ...bare } = entry;
      expect(
        problemOf(
          serializeDeadLetterEntry({ ...bare, record: record as never } as unknown as DeadLetterEntry),
        ),
      ).toBe('other-stream');
      const batch = [entry.record, record, entry.record];
      expect(problemOf(JSON.stringify({ ...DOCUMENTED, payload: JSON.stringify({ Records: batch }) }))).toBe(
        'other-stream',
      );
    }
    const noSequence = { ...(entry.record as object), dynamodb: { Keys: { pk: { S: 'a' } } } };
    expect(problemOf(serializeDeadLetterEntry({ ...entry, record: noSequence as never }))).toBe('malformed');
  });

  it('hostile messages (wrong types, huge fields, __proto__ keys) are each accepted or a short typed error', () => {
    const huge = 'x'.repeat(20_000);
    const anyValue = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constant(huge),
      fc.constant(STREAM),
      fc.constantFrom('1.0', 1, DEAD_LETTER_TYPE, DEAD_LETTER_POINTER_TYPE, '42', '-1', '1e3'),
    );
    const key = fc.constantFrom(
      '__proto__',
      'constructor',
      'type',
      'version',
      'record',
      'eventSourceARN',
      'DDBStreamBatchInfo',
      'KinesisBatchInfo',
      'payload',
      'bucket',
      'key',
      'Type',
      'Message',
      'dynamodb',
      'SequenceNumber',
      'Records',
      'startSequenceNumber',
      'endSequenceNumber',
      'streamArn',
      'shardId',
      'batchSize',
    );
    // Objects written out as text, so a `__proto__` key is a key of the JSON, as a sender could write it.
    const object: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        anyValue.map((v) => JSON.stringify(v)),
        fc
          .array(
            fc.tuple(
              key,
              fc.oneof(
                tie('node'),
                anyValue.map((v) => JSON.stringify(v)),
              ),
            ),
            { maxLength: 8 },
          )
          .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
      ),
    })).node;
    const wrapped = object.chain((text) =>
      fc.constantFrom(
        text,
        JSON.stringify({ Type: 'Notification', Message: text }),
        `{"type":"${DEAD_LETTER_TYPE}","version":1,"record":${text}}`,
        `{"type":"${DEAD_LETTER_TYPE}","version":1,"eventSourceARN":${JSON.stringify(STREAM)},"record":${text}}`,
        `{"type":"${DEAD_LETTER_POINTER_TYPE}","version":1,"bucket":${text},"key":"k"}`,
        JSON.stringify({ ...DOCUMENTED, payload: text }),
        JSON.stringify({ ...DOCUMENTED, payload: `{"Records":[${text},${text},${text}]}` }),
      ),
    );
    fc.assert(
      fc.property(wrapped, (text) => {
        let decoded: unknown;
        try {
          decoded = decodeRedriveMessage(text, 'sqs:m-1', STREAM);
        } catch (error) {
          expect(error).toBeInstanceOf(RedriveMessageError);
          // A huge field is named by its size, never repeated whole.
          expect((error as Error).message.length).toBeLessThan(1000);
          return;
        }
        expect(['on-failure', 'dead-letter', 'dead-letter-pointer']).toContain(
          (decoded as { kind: string }).kind,
        );
        // Nothing accepted came through the prototype: an accepted record names the stream itself.
        if ((decoded as { kind: string }).kind === 'dead-letter')
          for (const record of (decoded as { records: { eventSourceARN?: unknown }[] }).records)
            expect(Object.hasOwn(record, 'eventSourceARN') && record.eventSourceARN === STREAM).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
