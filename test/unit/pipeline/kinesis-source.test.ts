// kinesisSource() is how a handler opts into the Kinesis stages: a DynamoDB Streams handler's
// bundle links none of them, a Kinesis handler's links both, and the strings that used to name
// the sources fail at configuration time, naming the call that takes their place.
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createPipeline, createWindowHandler, kinesisSource } from '../../../src/pipeline/index.js';
import { RecordingSink, silentLogger } from './fixtures.js';
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
});
