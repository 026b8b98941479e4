import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createJsonLogger } from '../../../src/logging/json-logger.js';
import { fromPowertoolsLogger } from '../../../src/logging/powertools-logger.js';
import {
  createPipeline,
  createStreamHandler,
  type PipelineConfig,
  processBatch,
  ttlHealth,
} from '../../../src/pipeline/index.js';
import { captureJsonLines } from '../../support/capture-output.js';
import { batch, quiet, RecordingSink, seq } from './fixtures.js';
import { entry, linkedModules } from './linked-modules.js';

const SECRET = 'card-4111-1111';
const NOW = 1_800_000_010_000;

/** A batch whose every image holds a secret that must never reach a log line. */
function secretBatch(count: number, first = 0) {
  const event = batch(count, (i) => ({ ttl: i === 0 ? { N: '1800000600000' } : { N: '1800000600' } }));
  event.Records.forEach((record, i) => {
    const n = first + i;
    record.eventID = `event-${n}`;
    record.dynamodb.SequenceNumber = seq(n);
    record.dynamodb.Keys = { pk: { S: `item-${n}` } };
    const image = record.dynamodb.NewImage as Record<string, unknown>;
    image.pk = { S: `item-${n}` };
    image.card = { S: SECRET };
  });
  return event as unknown as DynamoDBStreamEvent;
}

function lambdaContext(awsRequestId: string): Context {
  return {
    awsRequestId,
    functionName: 'archiver',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:archiver',
    memoryLimitInMB: '256',
    getRemainingTimeInMillis: () => 60_000,
  } as unknown as Context;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * What every logging path of the pipeline exercises: a TTL warning, a sink logging a whole
 * record through its context logger, retries (debug), a give-up without a dead-letter sink
 * (error) and the partial-failure summary (warn).
 */
function scenario(): Omit<PipelineConfig, 'logger'> {
  const audit = new RecordingSink('audit', undefined, (records, { logger }) =>
    logger?.info({ record: records[0] }, 'audit saw a record'),
  );
  return {
    ...quiet,
    clock: () => NOW,
    ttlAttribute: ttlHealth('expiresAt'),
    retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    routes: [
      { name: 'audit', when: 'insert', to: audit },
      { name: 'archive', when: 'insert', to: new RecordingSink('archive', (s) => s === seq(2)) },
    ],
  };
}

const LEVEL_NAMES: Record<number, string> = { 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR' };

/** Stacks depend on the run; the rest of an error must match. */
function withoutStack(fields: Record<string, unknown>) {
  const err = fields.err as Record<string, unknown> | undefined;
  if (err === undefined) return fields;
  const { stack, ...rest } = err;
  expect(typeof stack).toBe('string');
  return { ...fields, err: rest };
}

function fromJsonLogger(line: Record<string, unknown>) {
  const { level, time, pid, hostname, msg, ...fields } = line;
  return withoutStack({ level: LEVEL_NAMES[level as number], message: msg, ...fields });
}

function fromPowertools(line: Record<string, unknown>) {
  const { timestamp, service, sampling_rate, ...fields } = line;
  expect(service).toBe('orders');
  return withoutStack(fields);
}

describe('a Powertools Logger as the pipeline logger (fromPowertoolsLogger)', () => {
  it("logs what tidewater's own logger logs, as Powertools lines, without item images", async () => {
    const ours: Record<string, unknown>[] = [];
    const destination = { write: (line: string) => ours.push(JSON.parse(line)) };
    const own = createStreamHandler({
      ...scenario(),
      logger: createJsonLogger({ level: 'debug', destination }),
    });
    const expected = await own(secretBatch(4), lambdaContext('req-1'));

    const lines = captureJsonLines();
    const handler = createStreamHandler({
      ...scenario(),
      logger: fromPowertoolsLogger(new Logger({ serviceName: 'orders', logLevel: 'DEBUG' })),
    });
    const response = await handler(secretBatch(4), lambdaContext('req-1'));
    vi.restoreAllMocks();

    expect(response).toEqual(expected);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: seq(2) }] });
    expect(ours.map((l) => l.msg)).toEqual([
      expect.stringMatching(/expiresAt/),
      'audit saw a record',
      'record failed',
      'record failed',
      'giving up on a record but no dead-letter sink is configured: reporting it failed',
      'batch partially failed: Lambda retries from the reported record',
    ]);
    expect(lines.map(fromPowertools)).toStrictEqual(ours.map(fromJsonLogger));
    for (const line of lines)
      expect(line).toMatchObject({ requestId: 'req-1', firstSequenceNumber: seq(0), records: 4 });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(SECRET);
    expect(lines[1]).toMatchObject({ record: { raw: { dynamodb: { NewImage: '[Redacted]' } } } });
  });

  it('logs item images when the pipeline and the adapter are told to (logImages)', async () => {
    const lines = captureJsonLines();
    const logger = fromPowertoolsLogger(new Logger({ serviceName: 'orders' }), { logImages: true });
    await processBatch(secretBatch(1), { ...scenario(), logImages: true, logger }, lambdaContext('req-2'));
    vi.restoreAllMocks();
    const warning = lines.find((l) => l.ttlProblem === 'milliseconds');
    expect(warning).toMatchObject({ level: 'WARN', NewImage: { card: { S: SECRET } } });
  });

  it("adds tidewater's invocation bindings to the Lambda context Powertools' own middleware injects", async () => {
    const logger = new Logger({ serviceName: 'orders' });
    const handler = createStreamHandler({ ...scenario(), logger: fromPowertoolsLogger(logger) }).use(
      injectLambdaContext(logger),
    );
    const lines = captureJsonLines();
    await handler(secretBatch(3), lambdaContext('req-3'));
    vi.restoreAllMocks();
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatchObject({
        function_name: 'archiver',
        function_request_id: 'req-3',
        requestId: 'req-3',
        lastSequenceNumber: seq(2),
      });
    }
  });

  it('keeps concurrent invocations apart: each line carries its own invocation', async () => {
    const logger = new Logger({ serviceName: 'orders' });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = new RecordingSink('slow', undefined, async (records, context) => {
      context.logger?.warn({ sink: 'slow', first: records[0]?.sequenceNumber }, 'sink waiting');
      await gate;
      context.logger?.warn({ sink: 'slow', first: records[0]?.sequenceNumber }, 'sink done');
    });
    const handler = createStreamHandler({
      ...quiet,
      logger: fromPowertoolsLogger(logger),
      routes: [{ when: 'insert', to: slow }],
    });
    const lines = captureJsonLines();
    const a = handler(secretBatch(2, 0), lambdaContext('req-a'));
    const b = handler(secretBatch(2, 10), lambdaContext('req-b'));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([a, b]);
    vi.restoreAllMocks();
    expect(lines.map((l) => l.message)).toEqual(['sink waiting', 'sink waiting', 'sink done', 'sink done']);
    for (const line of lines) {
      const own = line.requestId === 'req-a' ? seq(0) : seq(10);
      expect(line).toMatchObject({ first: own, firstSequenceNumber: own });
    }
    expect(new Set(lines.map((l) => l.requestId))).toEqual(new Set(['req-a', 'req-b']));
  });

  it('links the adapter only into a handler that calls fromPowertoolsLogger()', async () => {
    const handler = (logger: string) =>
      `import { createStreamHandler, fromPowertoolsLogger, MemorySink } from ${JSON.stringify(entry)};\n` +
      `void fromPowertoolsLogger;\nexport const handler = createStreamHandler({ ${logger}routes: [{ when: 'ttl-delete', to: new MemorySink() }] });\n`;
    const adapter = 'src/logging/powertools-logger.ts';
    expect(await linkedModules(handler(''))).not.toContain(adapter);
    const withAdapter = await linkedModules(
      handler(
        'logger: fromPowertoolsLogger({ debug() {}, info() {}, warn() {}, error() {}, createChild() {} }), ',
      ),
    );
    expect(withAdapter).toContain(adapter);
  });

  it('is taken as given; a bare Powertools Logger is refused naming fromPowertoolsLogger, as is a logger of neither kind', () => {
    const logger = new Logger({ serviceName: 'orders' });
    const adapted = fromPowertoolsLogger(logger);
    expect(createPipeline({ ...scenario(), logger: adapted }).config.logger).toBe(adapted);
    const pino = createJsonLogger();
    expect(createPipeline({ ...scenario(), logger: pino }).config.logger).toBe(pino);
    // @ts-expect-error a Powertools Logger has no child(): it is given as fromPowertoolsLogger(logger)
    expect(() => createStreamHandler({ ...scenario(), logger })).toThrow(
      /pino-compatible logger .*; a Powertools Logger as fromPowertoolsLogger\(logger\) \(import \{ fromPowertoolsLogger \} from 'tidewater'\)/,
    );
    expect(() => createStreamHandler({ ...scenario(), logger: { warn() {} } as never })).toThrow(
      InvalidOptionsError,
    );
  });
});

function emfDocuments(lines: Record<string, unknown>[]) {
  return lines.filter((l) => l._aws !== undefined);
}

function withoutTimestamp(doc: Record<string, unknown> | undefined) {
  const aws = (doc?._aws ?? {}) as Record<string, unknown>;
  const { Timestamp, ...rest } = aws;
  expect(typeof Timestamp).toBe('number');
  return { ...doc, _aws: rest };
}

describe('a Powertools Metrics instance as the metrics target', () => {
  const routes = () => [
    { name: 'archive', when: 'insert' as const, to: new RecordingSink('archive', (s) => s === seq(2)) },
  ];
  const base = { ...quiet, clock: () => NOW, retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };

  it("records the metrics tidewater's EMF line carries, under the instance's namespace and service", async () => {
    const ours: string[] = [];
    await processBatch(secretBatch(5), {
      ...base,
      routes: routes(),
      metrics: {
        namespace: 'Orders',
        dimensions: { service: 'archiver' },
        writer: { write: (l) => ours.push(l) },
      },
    });
    const lines = captureJsonLines();
    const response = await processBatch(secretBatch(5), {
      ...base,
      routes: routes(),
      metrics: { target: new Metrics({ namespace: 'Orders', serviceName: 'archiver' }) },
    });
    vi.restoreAllMocks();
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: seq(2) }]);
    const docs = emfDocuments(lines);
    expect(docs).toHaveLength(1);
    expect(withoutTimestamp(docs[0])).toStrictEqual(withoutTimestamp(JSON.parse(ours[0]!)));
    expect(docs[0]).toMatchObject({
      service: 'archiver',
      Records: 5,
      Inserts: 5,
      Failed: 3,
      'Routed.archive': 5,
    });
  });

  it('takes the instance as is, and publishes it with what the handlers added', async () => {
    const metrics = new Metrics({ namespace: 'Orders', serviceName: 'archiver' });
    const handler = createStreamHandler({
      ...base,
      metrics,
      handlers: { insert: () => void metrics.addMetric('OrdersSeen', 'Count', 1) },
    });
    const lines = captureJsonLines();
    await handler(secretBatch(3), lambdaContext('req-m'));
    await handler(secretBatch(2), lambdaContext('req-n'));
    vi.restoreAllMocks();
    const docs = emfDocuments(lines);
    expect(docs.map((d) => [d.Records, d.OrdersSeen])).toEqual([
      [3, [1, 1, 1]],
      [2, [1, 1]],
    ]);
  });

  it("leaves publishing to Powertools' logMetrics middleware with publish: false", async () => {
    const metrics = new Metrics({ namespace: 'Orders', serviceName: 'archiver' });
    const handler = createStreamHandler({
      ...base,
      routes: routes(),
      metrics: { target: metrics, publish: false },
    }).use(logMetrics(metrics, { throwOnEmptyMetrics: true }));
    const lines = captureJsonLines();
    // With throwOnEmptyMetrics the middleware throws if tidewater had published (and so emptied) them.
    await expect(handler(secretBatch(2), lambdaContext('req-p'))).resolves.toEqual({ batchItemFailures: [] });
    vi.restoreAllMocks();
    const docs = emfDocuments(lines);
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ Records: 2, 'Routed.archive': 2, service: 'archiver' });
  });

  it('with publish: false adds the metrics and leaves them stored until the instance is published', async () => {
    const metrics = new Metrics({ namespace: 'Orders', serviceName: 'archiver' });
    const lines = captureJsonLines();
    await processBatch(secretBatch(2), {
      ...base,
      routes: routes(),
      metrics: { target: metrics, publish: false },
    });
    const published = emfDocuments(lines).length;
    metrics.publishStoredMetrics();
    vi.restoreAllMocks();
    expect(published).toBe(0);
    expect(emfDocuments(lines)).toEqual([expect.objectContaining({ Records: 2, Inserts: 2 })]);
  });

  it('logs, and does not fail the batch, when the instance refuses the metrics', async () => {
    // Powertools refuses a metric named like a dimension.
    const metrics = new Metrics({ namespace: 'Orders', defaultDimensions: { Records: 'x' } });
    const errors: Record<string, unknown>[] = [];
    const logger = createJsonLogger({ destination: { write: (line) => errors.push(JSON.parse(line)) } });
    const lines = captureJsonLines();
    const response = await processBatch(secretBatch(2), {
      ...base,
      routes: routes(),
      logger,
      metrics: { target: metrics },
    });
    vi.restoreAllMocks();
    expect(response).toEqual({ batchItemFailures: [] });
    expect(emfDocuments(lines)).toEqual([]);
    expect(errors).toContainEqual(
      expect.objectContaining({
        msg: 'writing the metrics line failed',
        err: expect.objectContaining({ message: expect.stringMatching(/collision on "Records"/) }),
      }),
    );
  });

  it('rejects settings the instance owns, and a target that is not one', () => {
    const metrics = new Metrics({ namespace: 'Orders' });
    const config = { ...base, routes: routes() };
    for (const [option, message] of [
      [{ target: metrics, namespace: 'X' }, /metrics.namespace does not apply with metrics.target/],
      [{ target: metrics, dimensions: {} }, /metrics.dimensions does not apply/],
      [{ target: metrics, writer: process.stdout }, /metrics.writer does not apply/],
      [{ target: metrics, publish: 'yes' }, /option 'metrics.publish' must be a boolean/],
      [{ publish: true }, /metrics.publish applies to metrics.target only/],
      [{ target: { addMetric() {} } }, /option 'metrics.target' must be a Powertools Metrics instance/],
    ] as const) {
      expect(() => createStreamHandler({ ...config, metrics: option as never })).toThrow(InvalidOptionsError);
      expect(() => createStreamHandler({ ...config, metrics: option as never })).toThrow(message);
    }
  });
});
