import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createJsonLogger } from '../../../src/logging/json-logger.js';
import { fromPowertoolsLogger } from '../../../src/logging/powertools-logger.js';
import { MalformedRecordError, NumberValue } from '../../../src/records/index.js';
import { captureJsonLines } from '../../support/capture-output.js';

function captureJson() {
  const lines: Record<string, unknown>[] = [];
  return { lines, destination: { write: (line: string) => lines.push(JSON.parse(line)) } };
}

const LEVEL_NAMES: Record<number, string> = { 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR' };

/** tidewater's JSON line, less what only its envelope has (time, pid, hostname), with Powertools' names. */
function asPowertools(line: Record<string, unknown>) {
  const { level, time, pid, hostname, msg, ...fields } = line;
  return { level: LEVEL_NAMES[level as number], ...(msg === undefined ? {} : { message: msg }), ...fields };
}

/** A Powertools line, less its own envelope fields. */
function withoutEnvelope(line: Record<string, unknown> | undefined) {
  const { timestamp, service, sampling_rate, ...rest } = line ?? {};
  expect(typeof timestamp).toBe('string');
  expect(service).toBe('orders');
  return rest;
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('fromPowertoolsLogger', () => {
  const cause = new TypeError('inner');
  const error = new MalformedRecordError(
    'invalid-number',
    'N must be a number',
    { eventID: 'e1', sequenceNumber: '42', path: 'dynamodb.NewImage.n' },
    { cause },
  );
  const calls: [string, object | string, string | undefined][] = [
    ['info', { sequenceNumber: '42', n: 10n ** 30n, exact: new NumberValue('1.50') }, 'hello'],
    ['warn', { err: error, sequenceNumber: '42' }, 'malformed stream record'],
    ['error', error, undefined],
    ['info', 'just a message', undefined],
    [
      'warn',
      { record: { NewImage: { a: { S: 'secret' } }, Keys: { pk: { S: 'k' } } }, set: new Set([1]) },
      'x',
    ],
    ['debug', { at: 'debug' }, 'debug line'],
  ];

  for (const options of [{}, { logImages: true }, { redactKeys: true, redact: ['set'] }]) {
    it(`writes tidewater's fields, JSON-safe and redacted alike, with ${JSON.stringify(options)}`, () => {
      const json = captureJson();
      const ours = createJsonLogger({ ...options, level: 'debug', destination: json.destination }).child({
        requestId: 'r1',
        n: 1n,
      });
      const lines = captureJsonLines();
      const powertools = fromPowertoolsLogger(
        new Logger({ serviceName: 'orders', logLevel: 'DEBUG' }),
        options,
      );
      const child = powertools.child({ requestId: 'r1', n: 1n });
      for (const [level, obj, msg] of calls) {
        (ours as unknown as Record<string, (o: unknown, m?: string) => void>)[level]?.(obj, msg);
        (child as unknown as Record<string, (o: unknown, m?: string) => void>)[level]?.(obj, msg);
      }
      vi.restoreAllMocks();
      expect(lines).toHaveLength(calls.length);
      expect(lines.map(withoutEnvelope)).toStrictEqual(json.lines.map(asPowertools));
      const text = JSON.stringify(lines);
      expect(text.includes('secret')).toBe(options.logImages === true);
    });
  }

  it('gives a child its bindings and leaves the parent and siblings without them', () => {
    const lines = captureJsonLines();
    const root = fromPowertoolsLogger(new Logger({ serviceName: 'orders' }));
    const a = root.child({ requestId: 'a' });
    const b = root.child({ requestId: 'b' }).child({ sink: 'archive' });
    a.info({ n: 1 }, 'from a');
    b.info({ n: 2 }, 'from b');
    root.info({ n: 3 }, 'from root');
    vi.restoreAllMocks();
    expect(lines.map(withoutEnvelope)).toEqual([
      { level: 'INFO', message: 'from a', requestId: 'a', n: 1 },
      { level: 'INFO', message: 'from b', requestId: 'b', sink: 'archive', n: 2 },
      { level: 'INFO', message: 'from root', n: 3 },
    ]);
  });

  it("follows the Logger's state at log time: its level, appended keys and Lambda context", () => {
    const lines = captureJsonLines();
    const logger = new Logger({ serviceName: 'orders' });
    const child = fromPowertoolsLogger(logger).child({ requestId: 'r1' });
    child.debug({}, 'hidden at INFO');
    logger.setLogLevel('DEBUG');
    logger.appendKeys({ tenant: 't1' });
    logger.addContext({
      functionName: 'archiver',
      functionVersion: '$LATEST',
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:archiver',
      memoryLimitInMB: '256',
      awsRequestId: 'r1',
    } as never);
    child.debug({ n: 1 }, 'shown at DEBUG');
    vi.restoreAllMocks();
    expect(lines.map(withoutEnvelope)).toEqual([
      expect.objectContaining({
        level: 'DEBUG',
        message: 'shown at DEBUG',
        requestId: 'r1',
        n: 1,
        tenant: 't1',
        function_name: 'archiver',
      }),
    ]);
  });

  it("keeps Powertools' log buffering: a debug line below the level is printed when an error is logged", () => {
    vi.stubEnv(
      '_X_AMZN_TRACE_ID',
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    );
    const lines = captureJsonLines();
    const logger = fromPowertoolsLogger(
      new Logger({ serviceName: 'orders', logBufferOptions: { enabled: true } }),
    ).child({ requestId: 'r1' });
    logger.debug({ attempt: 1 }, 'record failed');
    expect(lines).toEqual([]);
    logger.error({ err: new Error('down') }, 'giving up');
    vi.restoreAllMocks();
    expect(lines.map((l) => [l.level, l.message, l.requestId])).toEqual([
      ['DEBUG', 'record failed', 'r1'],
      ['ERROR', 'giving up', 'r1'],
    ]);
  });

  it('validates its options and its logger', () => {
    const logger = new Logger({ serviceName: 'orders' });
    expect(() => fromPowertoolsLogger(logger, { logImage: true } as never)).toThrow(
      /fromPowertoolsLogger: unknown option 'logImage'/,
    );
    expect(() => fromPowertoolsLogger(logger, { redact: 'email' } as never)).toThrow(InvalidOptionsError);
    expect(() => fromPowertoolsLogger(createJsonLogger() as never)).toThrow(/expected a Powertools Logger/);
  });
});
