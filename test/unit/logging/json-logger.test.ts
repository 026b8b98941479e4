import { describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createLogger } from '../../../src/logging/index.js';
import { createJsonLogger, defaultJsonLogger } from '../../../src/logging/json-logger.js';
import { MalformedRecordError, NumberValue } from '../../../src/records/index.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  };
}

/** pino and the JSON logger differ only in the timestamp. */
function withoutTime(line: Record<string, unknown> | undefined) {
  const { time, ...rest } = line ?? {};
  expect(typeof time).toBe('number');
  return rest;
}

describe('the pipeline default logger (createJsonLogger) writes the lines createLogger (pino) writes', () => {
  const cause = new TypeError('inner');
  const error = new MalformedRecordError(
    'invalid-number',
    'N must be a number',
    { eventID: 'e1', sequenceNumber: '42', path: 'dynamodb.NewImage.n' },
    { cause },
  );
  const aggregate = new AggregateError([new Error('a'), new RangeError('b')], 'several');
  const calls: [string, object | string, string | undefined][] = [
    ['info', { sequenceNumber: '42', n: 10n ** 30n, exact: new NumberValue('1.50') }, 'hello'],
    ['warn', { err: error, sequenceNumber: '42' }, 'malformed stream record'],
    ['error', { err: aggregate }, 'failed'],
    ['error', error, undefined],
    ['info', 'just a message', undefined],
    [
      'warn',
      { record: { NewImage: { a: { S: 'secret' } }, Keys: { pk: { S: 'k' } } }, set: new Set([1]) },
      'x',
    ],
    ['debug', { hidden: true }, 'below the level'],
  ];

  for (const options of [{}, { base: null, name: 'tw', logImages: true }, { level: 'debug' as const }]) {
    it(`same lines with ${JSON.stringify(options)}`, () => {
      const a = capture();
      const b = capture();
      const pino = createLogger({ ...options, destination: a.destination }).child({
        awsRequestId: 'r1',
        n: 1n,
      });
      const json = createJsonLogger({ ...options, destination: b.destination }).child({
        awsRequestId: 'r1',
        n: 1n,
      });
      for (const [level, obj, msg] of calls) {
        (pino as unknown as Record<string, (o: unknown, m?: string) => void>)[level]?.(obj, msg);
        (json as unknown as Record<string, (o: unknown, m?: string) => void>)[level]?.(obj, msg);
      }
      expect(b.lines.length).toBe(a.lines.length);
      expect(b.lines.length).toBeGreaterThan(0);
      for (let i = 0; i < a.lines.length; i++)
        expect(withoutTime(b.lines[i])).toStrictEqual(withoutTime(a.lines[i]));
    });
  }

  it('validates options like createLogger', () => {
    expect(() => createJsonLogger({ levle: 'info' } as never)).toThrow(/unknown option 'levle'/);
    expect(() => createJsonLogger({ level: 'loud' as never })).toThrow(/option 'level'/);
  });
});

describe("the pipeline's default logger (defaultJsonLogger)", () => {
  it('writes what createJsonLogger({ logImages }) writes, without reading options', () => {
    const record = { sequenceNumber: '7', NewImage: { card: { S: 'secret' } }, Keys: { pk: { S: 'a' } } };
    for (const logImages of [false, true]) {
      const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      defaultJsonLogger(logImages).child({ requestId: 'r' }).warn({ record }, 'seen');
      createJsonLogger({ logImages }).child({ requestId: 'r' }).warn({ record }, 'seen');
      const [ours, theirs] = write.mock.calls.map(([line]) => withoutTime(JSON.parse(String(line))));
      write.mockRestore();
      expect(ours).toEqual(theirs);
      expect(JSON.stringify(ours).includes('secret')).toBe(logImages);
    }
  });

  it('refuses a LOG_LEVEL it does not know as createJsonLogger does', () => {
    vi.stubEnv('LOG_LEVEL', 'loud');
    try {
      for (const make of [() => defaultJsonLogger(false), () => createJsonLogger()]) {
        expect(make).toThrow(InvalidOptionsError);
        expect(make).toThrow(
          'createJsonLogger: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
        );
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
