import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createLogger } from '../../../src/logging/index.js';
import { toLogSafe } from '../../../src/logging/safe-value.js';
import { MalformedRecordError, NumberValue, parseStreamRecord } from '../../../src/records/index.js';
import { lambdaRecord } from '../records/fixtures.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes bigint, NumberValue, Set, Map and Uint8Array as exact JSON', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination, base: null });
    logger.info(
      {
        big: 12345678901234567890123456789012345678n,
        exact: new NumberValue('1.50'),
        set: new Set([1n, 'a']),
        map: new Map([['k', 2n]]),
        bytes: new Uint8Array([1, 2, 3]),
      },
      'values',
    );
    expect(lines[0]).toMatchObject({
      msg: 'values',
      big: '12345678901234567890123456789012345678',
      exact: '1.50',
      set: ['1', 'a'],
      map: { k: '2' },
      bytes: 'AQID',
    });
  });

  it('redacts images everywhere by default: record getters, raw records, nested entries', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination, base: null });
    const record = parseStreamRecord(lambdaRecord());
    logger.warn({ record, oldImage: record.oldImage, entry: { record: record.raw } }, 'images');
    const text = JSON.stringify(lines[0]);
    expect(text).not.toContain('12345678901234567890.123456789');
    expect(lines[0]).toMatchObject({
      oldImage: '[Redacted]',
      record: {
        kind: 'ttl-delete',
        raw: { dynamodb: { OldImage: '[Redacted]', Keys: { pk: { S: 'order#1' } } } },
      },
      entry: { record: { dynamodb: { OldImage: '[Redacted]' } } },
    });
  });

  it('redacts child bindings too', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination, base: null });
    logger
      .child({ newImage: { secret: 's' }, n: 5n })
      .child({ deeper: true })
      .info('child');
    expect(lines[0]).toMatchObject({ newImage: '[Redacted]', n: '5', deeper: true });
  });

  it('logs images when asked, and redacts keys and extra names when asked', () => {
    const { lines, destination } = capture();
    createLogger({ destination, base: null, logImages: true }).info({ newImage: { a: 1n } });
    createLogger({ destination, base: null, redactKeys: true, redact: ['email'] }).info({
      keys: { pk: 'x' },
      user: { email: 'a@b' },
    });
    expect(lines[0]).toMatchObject({ newImage: { a: '1' } });
    expect(lines[1]).toMatchObject({ keys: '[Redacted]', user: { email: '[Redacted]' } });
  });

  it('serializes errors with their type and record identity', () => {
    const { lines, destination } = capture();
    const error = new MalformedRecordError('invalid-number', 'bad N', {
      eventID: 'e1',
      sequenceNumber: '42',
    });
    createLogger({ destination, base: null }).error({ err: error }, 'failed');
    expect(lines[0]).toMatchObject({
      err: { type: 'MalformedRecordError', reason: 'invalid-number', eventID: 'e1', sequenceNumber: '42' },
    });
  });

  it('survives cycles and cuts depth', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(toLogSafe(cyclic)).toStrictEqual({ a: 1, self: '[Circular]' });
    const { lines, destination } = capture();
    createLogger({ destination, base: null, maxDepth: 2 }).info({ a: { b: { c: 1 } } });
    expect(lines[0]).toMatchObject({ a: { b: '[Object]' } });
  });

  it('validates options', () => {
    expect(() => createLogger({ logimages: true } as never)).toThrow(InvalidOptionsError);
    expect(() => createLogger({ level: 'verbose' as never })).toThrow(/level/);
    expect(() => createLogger({ logImages: 'yes' as never })).toThrow(InvalidOptionsError);
    expect(() => createLogger({ redact: [''] })).toThrow(InvalidOptionsError);
  });
});
