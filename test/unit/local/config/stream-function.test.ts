import { describe, expect, it } from 'vitest';
import { ServerlessConfigError } from '../../../../src/local/config/errors.js';
import {
  parseStreamEvent,
  type StreamFunctionSettings,
  toEmulatorOptions,
} from '../../../../src/local/config/stream-function.js';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { StreamEventBuilder } from '../../../../src/local/emulator/events.js';

const ARN = 'arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/2026-01-01T00:00:00.000';

function fn(stream: Record<string, unknown>): StreamFunctionSettings {
  const settings = parseStreamEvent('archive', { arn: ARN, ...stream }, 'serverless.yml');
  if (!settings) throw new Error('not a DynamoDB stream');
  return {
    key: 'archive',
    functionName: 'svc-dev-archive',
    handler: 'src/handlers/archive.handler',
    handlerModule: '/repo/src/handlers/archive',
    handlerExport: 'handler',
    timeoutSeconds: 30,
    memorySize: 512,
    environment: {},
    stream: settings,
  };
}

describe('a stream event in serverless.yml', () => {
  // Lambda developer guide, "Using tumbling windows with DynamoDB" (configuration) and the DynamoDB
  // event source mapping parameters: TumblingWindowInSeconds, 0 to 900.
  it('brings tumblingWindowInSeconds to the emulator', async () => {
    const options = toEmulatorOptions(fn({ tumblingWindowInSeconds: 120 }));
    expect(options.tumblingWindowInSeconds).toBe(120);
    const seen: unknown[] = [];
    const mapping = new EventSourceMappingEmulator({
      ...options,
      handler: async (event) => {
        seen.push(event.window);
        return { state: {} };
      },
    });
    await mapping.runRecords([new StreamEventBuilder({ now: 1_767_225_737 }).insert({ pk: 'a' })]);
    const window = { start: '2026-01-01T00:02:00Z', end: '2026-01-01T00:04:00Z' };
    expect(seen).toEqual([window, window]);
    expect(toEmulatorOptions(fn({})).tumblingWindowInSeconds).toBeUndefined();
  });

  it('brings every numeric setting to the emulator under its emulator name, and leaves unset ones out', () => {
    const options = toEmulatorOptions(
      fn({
        batchSize: 25,
        batchWindow: 2,
        maximumRetryAttempts: 3,
        maximumRecordAgeInSeconds: 600,
        parallelizationFactor: 4,
        tumblingWindowInSeconds: 60,
      }),
    );
    expect(options).toMatchObject({
      batchSize: 25,
      maximumBatchingWindowInSeconds: 2,
      maximumRetryAttempts: 3,
      maximumRecordAgeInSeconds: 600,
      parallelizationFactor: 4,
      tumblingWindowInSeconds: 60,
    });
    const bare = toEmulatorOptions(fn({}));
    for (const key of [
      'batchSize',
      'maximumBatchingWindowInSeconds',
      'maximumRetryAttempts',
      'maximumRecordAgeInSeconds',
      'parallelizationFactor',
      'tumblingWindowInSeconds',
    ])
      expect(bare).not.toHaveProperty(key);
  });

  // DynamoDB event source mapping parameters: "StartingPosition: TRIM_HORIZON or LATEST".
  it.each(['TRIM_HORIZON', 'LATEST'])('takes startingPosition %s', (position) => {
    expect(fn({ startingPosition: position }).stream.startingPosition).toBe(position);
  });

  it('refuses startingPosition AT_TIMESTAMP, which CreateEventSourceMapping refuses for a DynamoDB stream', () => {
    expect(() => fn({ startingPosition: 'AT_TIMESTAMP', startingPositionTimestamp: 1_767_225_600 })).toThrow(
      ServerlessConfigError,
    );
    expect(() => fn({ startingPosition: 'AT_TIMESTAMP' })).toThrow(
      /startingPosition must be TRIM_HORIZON or LATEST for a DynamoDB stream, got "AT_TIMESTAMP" \(AT_TIMESTAMP is for Kinesis and Kafka sources\)/,
    );
  });

  it('refuses startingPositionTimestamp, which only goes with AT_TIMESTAMP', () => {
    expect(() => fn({ startingPosition: 'LATEST', startingPositionTimestamp: 1_767_225_600 })).toThrow(
      /startingPositionTimestamp goes with startingPosition AT_TIMESTAMP/,
    );
  });
});
