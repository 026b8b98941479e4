import { describe, expect, it, vi } from 'vitest';
import {
  describeError,
  InvalidOptionsError,
  PartialFailureError,
  RecordError,
  recordLabel,
  TidewaterError,
} from '../../../src/core/errors.js';
import * as root from '../../../src/index.js';
import * as s3 from '../../../src/s3.js';
import * as sqs from '../../../src/sqs.js';
import * as votes from '../../../src/votes/index.js';

describe('the error base', () => {
  it('gives every class a stable name and the offending option', () => {
    const error = new InvalidOptionsError('X: bad', { option: 'size' });
    expect(error).toBeInstanceOf(TidewaterError);
    expect(error).toMatchObject({ name: 'InvalidOptionsError', option: 'size', message: 'X: bad' });
    expect(new InvalidOptionsError('X: bad').option).toBeUndefined();
    expect(new TidewaterError('t').name).toBe('TidewaterError');
  });

  it('carries the record identity on RecordError and names it in one way', () => {
    const cause = new Error('root');
    const error = new RecordError('failed', { eventID: 'e1', sequenceNumber: '100' }, { cause });
    expect(error).toMatchObject({ name: 'RecordError', eventID: 'e1', sequenceNumber: '100', cause });
    expect(recordLabel({ eventID: 'e1', sequenceNumber: '100' })).toBe('eventID=e1 sequenceNumber=100');
    expect(recordLabel({})).toBe('eventID=? sequenceNumber=?');
  });

  it('quotes causes as Name: message', () => {
    expect(describeError(new TypeError('x'))).toBe('TypeError: x');
    expect(describeError('plain')).toBe('plain');
    expect(new PartialFailureError(3)).toMatchObject({ name: 'PartialFailureError', remaining: 3 });
  });

  it('keeps the promise: every error class tidewater exports extends TidewaterError', async () => {
    // The deployable archive handler reads its environment when loaded.
    vi.stubEnv('ARCHIVE_BUCKET', 'b');
    vi.stubEnv('TTL_ATTRIBUTE', 'ttl');
    vi.stubEnv('DEAD_LETTER_QUEUE_URL', 'https://sqs.us-east-1.amazonaws.com/1/q');
    const archiveHandler = await import('../../../src/handlers/archive-ttl.js');
    vi.unstubAllEnvs();
    const modules = { root, s3, sqs, votes, archiveHandler };
    const classes = Object.entries(modules).flatMap(([where, module]) =>
      Object.entries(module)
        .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
        .map(([name, value]) => [`${where}.${name}`, value as new (...args: never[]) => Error] as const),
    );
    expect(classes.length).toBeGreaterThan(15);
    for (const [name, value] of classes) {
      expect(value === TidewaterError || value.prototype instanceof TidewaterError, name).toBe(true);
    }
  });
});
