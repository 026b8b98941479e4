import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEAD_LETTER_TYPE,
  serializeDeadLetterEntry,
  serializeDeadLetterPointer,
} from '../../../src/sinks/dead-letter-message.js';
import { streamGroupId } from '../../../src/sinks/sqs-dead-letter-sink.js';
import type { DeadLetterEntry } from '../../../src/sinks/types.js';

/** Every character SQS accepts in a message body; anything else is refused or replaced by U+FFFD. */
const SQS_BODY = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

function entry(record: unknown, message = 'bad'): DeadLetterEntry {
  return {
    reason: 'malformed',
    record,
    eventID: 'ev-1',
    sequenceNumber: '100000000000000000001',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
    error: { name: 'MalformedRecordError', message },
    attempts: 1,
    at: '2026-01-15T10:00:00.000Z',
  };
}

describe('dead-letter message bodies', () => {
  it('escape U+FFFE and U+FFFF, which JSON leaves raw and SQS does not accept', () => {
    const record = { dynamodb: { NewImage: { name: { S: 'a\uFFFFb\uFFFEc' } } } };
    const body = serializeDeadLetterEntry(entry(record));
    expect(body).not.toMatch(/[\uFFFE\uFFFF]/);
    expect(body).toContain('a\\uffffb\\ufffec');
    expect(JSON.parse(body).record).toEqual(record);
  });

  it('hold only characters SQS accepts and mean the same JSON, for any text', () => {
    // Any code point, plus the characters at the edges of what SQS accepts, lone surrogates included.
    const edge = fc.constantFrom(
      '\uFFFE',
      '\uFFFF',
      '\uFFFD',
      '\uD800',
      '\uDFFF',
      '\u0000',
      '\u001F',
      '\t',
      '\u{10FFFF}',
    );
    const anyText = fc.string({
      unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), edge),
    });
    fc.assert(
      fc.property(anyText, anyText, (text, message) => {
        const e = entry({ dynamodb: { Keys: { pk: { S: text } } }, note: text }, message);
        for (const body of [
          serializeDeadLetterEntry(e),
          serializeDeadLetterPointer(e, 'bucket', 'dead-letter/x.json', 300_000),
        ]) {
          expect(body).toMatch(SQS_BODY);
          const parsed = JSON.parse(body);
          expect(parsed.error.message).toBe(message);
          if (parsed.type === DEAD_LETTER_TYPE) expect(parsed.record.note).toBe(text);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('FIFO group ids', () => {
  it('keep a stream ARN SQS accepts and hash one longer than 128 characters, one group per stream', () => {
    const arn = (table: string) =>
      `arn:aws:dynamodb:eu-central-1:123456789012:table/${table}/stream/2026-01-01T00:00:00.000`;
    const short = arn('sessions');
    expect(streamGroupId(short)).toBe(short);
    const long = arn('t'.repeat(255));
    const other = arn(`${'t'.repeat(254)}u`);
    expect(long.length).toBeGreaterThan(128);
    for (const id of [streamGroupId(long), streamGroupId(other)]) expect(id).toMatch(/^[!-~]{1,128}$/);
    expect(streamGroupId(long)).toBe(streamGroupId(long));
    expect(streamGroupId(long)).not.toBe(streamGroupId(other));
    expect(streamGroupId(undefined)).toBe('tidewater-dead-letter');
  });
});
