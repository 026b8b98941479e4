// kinesisSource() is how a handler opts into the Kinesis stages: a DynamoDB Streams handler's
// bundle links none of them, a Kinesis handler's links both, and the strings that used to name
// the sources fail at configuration time, naming the call that takes their place.
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createPipeline, createWindowHandler, kinesisSource } from '../../../src/pipeline/index.js';
import { MalformedRecordError } from '../../../src/records/errors.js';
import { toKinesisRecord } from '../../../src/records/kinesis-encode.js';
import { RecordingDeadLetter, RecordingSink, silentLogger, streamRecord } from './fixtures.js';
import { entry, linkedModules } from './linked-modules.js';

const KINESIS_MODULES = [
  'src/records/kinesis.ts',
  'src/pipeline/kinesis-order.ts',
  'src/pipeline/kinesis-source.ts',
];

describe('kinesisSource', () => {
  it('links the Kinesis decoder and ordering only into a handler that uses it', async () => {
    const handler = (source: string) =>
      `import { createStreamHandler, kinesisSource, MemorySink } from ${JSON.stringify(entry)};\n` +
      `void kinesisSource;\nexport const handler = createStreamHandler({ ${source}routes: [{ when: 'ttl-delete', to: new MemorySink() }] });\n`;
    const streamOnly = await linkedModules(handler(''));
    expect(streamOnly).toContain('src/pipeline/engine.ts');
    expect(streamOnly).toContain('src/records/parse.ts');
    for (const module of KINESIS_MODULES) expect(streamOnly).not.toContain(module);
    const withKinesis = await linkedModules(handler('source: kinesisSource(), '));
    for (const module of KINESIS_MODULES) expect(withKinesis).toContain(module);
  });

  it("refuses the strings 'kinesis' and 'auto' at configuration time, naming kinesisSource()", () => {
    for (const source of ['kinesis', 'auto']) {
      const config = { source, routes: [{ when: () => true, to: new RecordingSink('keep') }] };
      expect(() => createPipeline(config as never)).toThrow(InvalidOptionsError);
      expect(() => createPipeline(config as never)).toThrow(/kinesisSource\(\)/);
      expect(() =>
        createWindowHandler({
          source: source as never,
          initial: () => 0,
          reduce: (n) => n,
          onWindowEnd: () => undefined,
        }),
      ).toThrow(/kinesisSource\(\)/);
    }
  });

  it('reads its options with the one options reader', () => {
    expect(kinesisSource().expected).toBe('kinesis');
    expect(kinesisSource({ alsoDynamoDBStream: true }).expected).toBe('auto');
    expect(() => kinesisSource({ alsoDynamoDbStream: true } as never)).toThrow(
      /unknown option 'alsoDynamoDbStream'/,
    );
    const pipeline = createPipeline({
      source: kinesisSource(),
      routes: [{ when: () => true, to: new RecordingSink('keep') }],
      logger: silentLogger(),
    });
    expect(pipeline.config.kinesis?.source.expected).toBe('kinesis');
  });

  it("dead-letters a record whose change data names another table than the stream's own, with reason foreign-table", async () => {
    const delivered: string[] = [];
    const dlq = new RecordingDeadLetter();
    const pipeline = createPipeline({
      source: kinesisSource({ tableName: ['orders', 'returns'] }),
      routes: [
        {
          when: () => true,
          to: new RecordingSink('keep', undefined, (records) => {
            for (const r of records) delivered.push(`${r.tableName} ${r.eventID}`);
          }),
        },
      ],
      deadLetter: dlq,
      logger: silentLogger(),
      metrics: false,
    });
    const at = (i: number, tableName: string) =>
      toKinesisRecord(streamRecord(i), {
        sequenceNumber: String(5_000 + i),
        tableName,
        creationTime: 1_800_000_000_000 + i,
      });
    const result = await pipeline.process({ Records: [at(0, 'orders'), at(1, 'payroll'), at(2, 'returns')] });
    expect(result).toEqual({ batchItemFailures: [] });
    expect(delivered).toEqual(['orders event-0', 'returns event-2']);
    expect(dlq.entries.map((e) => [e.reason, e.sequenceNumber])).toEqual([['malformed', '5001']]);
    const error = dlq.entries[0]!.error;
    expect(error.name).toBe(new MalformedRecordError('foreign-table', '', {}).name);
    expect(error.message).toMatch(
      /^malformed stream record \(foreign-table\) eventID=event-1 sequenceNumber=5001/,
    );
    expect(error.message).not.toContain('payroll');
  });

  it('takes every table without tableName, and refuses an empty one at configuration time', () => {
    expect(() => kinesisSource({ tableName: '' })).toThrow(InvalidOptionsError);
    expect(() => kinesisSource({ tableName: [] })).toThrow(/tableName/);
    expect(() => kinesisSource({ tableName: ['orders', 5] as never })).toThrow(InvalidOptionsError);
  });
});
