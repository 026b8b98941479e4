import { describe, expect, it } from 'vitest';
import { judgeResponse } from '../../../src/lambda/stream-response.js';

// Lambda developer guide, "Configuring partial batch response with DynamoDB and Lambda"
// (services-ddb-batchfailurereporting), success and failure conditions; "Using tumbling windows
// with DynamoDB" (services-ddb-windows) for the state a windowed response must carry.
const batch = ['101', '102', '103'];
const indexOf = (id: string) => batch.indexOf(id);
const partial = { reportBatchItemFailures: true, windowed: false };

describe('judgeResponse: partial batch responses (services-ddb-batchfailurereporting)', () => {
  it.each([
    ['an empty batchItemFailures list', { batchItemFailures: [] }],
    ['a null batchItemFailures list', { batchItemFailures: null }],
    ['an empty EventResponse', {}],
    ['a null EventResponse', null],
    ['no response', undefined],
  ])('%s is a complete success', (_, value) => {
    expect(judgeResponse(value, indexOf, partial)).toEqual({ outcome: 'success' });
  });

  it('the lowest reported sequence number is where the batch is retried from', () => {
    const value = { batchItemFailures: [{ itemIdentifier: '103' }, { itemIdentifier: '102' }] };
    expect(judgeResponse(value, indexOf, partial)).toEqual({ outcome: 'partial-failure', index: 1 });
  });

  it.each([
    ['an empty string itemIdentifier', { itemIdentifier: '' }, /itemIdentifier the string "" is empty/],
    ['a null itemIdentifier', { itemIdentifier: null }, /itemIdentifier null is empty/],
    ['an itemIdentifier with a bad key name', { itemId: '102' }, /no itemIdentifier \(its keys: itemId\)/],
    [
      'an identifier not in the batch',
      { itemIdentifier: '999' },
      /"999" is not a sequence number in the batch/,
    ],
  ])('%s is a complete failure', (_, failure, message) => {
    const verdict = judgeResponse({ batchItemFailures: [failure] }, indexOf, partial);
    expect(verdict).toMatchObject({ outcome: 'invalid-response', error: expect.stringMatching(message) });
  });

  it('a numeric itemIdentifier fails the batch and is named as a number, not as missing', () => {
    const verdict = judgeResponse({ batchItemFailures: [{ itemIdentifier: 102 }] }, indexOf, partial);
    expect(verdict).toEqual({
      outcome: 'invalid-response',
      error: "itemIdentifier number 102 is not a string: it must be the record's SequenceNumber text",
    });
  });

  it.each([
    ['a string', 'ok', /the string "ok"/],
    ['a number', 0, /number 0/],
    ['an array', [], /an array/],
  ])('a response that is %s is not an EventResponse: the batch fails', (_, value, shown) => {
    const verdict = judgeResponse(value, indexOf, partial);
    expect(verdict).toMatchObject({ outcome: 'invalid-response', error: expect.stringMatching(shown) });
  });

  it('without ReportBatchItemFailures whatever the handler returns is success', () => {
    for (const value of ['ok', { batchItemFailures: [{ itemIdentifier: '' }] }, 42])
      expect(judgeResponse(value, indexOf, { reportBatchItemFailures: false, windowed: false })).toEqual({
        outcome: 'success',
      });
  });
});

describe('judgeResponse with a tumbling window (services-ddb-windows)', () => {
  const windowed = { reportBatchItemFailures: false, windowed: true };

  it('"If the response does not contain a state property, Lambda considers this a failed invocation"', () => {
    for (const value of [undefined, null, {}, { batchItemFailures: [] }, 'state'])
      expect(judgeResponse(value, indexOf, windowed)).toMatchObject({ outcome: 'invalid-response' });
  });

  it('a state that is not an object fails the invocation too', () => {
    for (const state of [null, 3, 'x', [1]])
      expect(judgeResponse({ state }, indexOf, windowed)).toMatchObject({
        outcome: 'invalid-response',
        error: expect.stringContaining("the response's state is"),
      });
  });

  it('returns the state as Lambda keeps it: through JSON', () => {
    const verdict = judgeResponse({ state: { at: new Date(0), drop: undefined, n: 1 } }, indexOf, windowed);
    expect(verdict).toEqual({ outcome: 'success', state: { at: '1970-01-01T00:00:00.000Z', n: 1 } });
  });

  it('keeps the state of a partial batch response with ReportBatchItemFailures', () => {
    const verdict = judgeResponse(
      { state: { n: 1 }, batchItemFailures: [{ itemIdentifier: '102' }] },
      indexOf,
      { reportBatchItemFailures: true, windowed: true },
    );
    expect(verdict).toEqual({ outcome: 'partial-failure', index: 1, state: { n: 1 } });
  });
});
