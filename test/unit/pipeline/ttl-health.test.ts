import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createJsonLogger } from '../../../src/logging/json-logger.js';
import { createPipeline, processBatch } from '../../../src/pipeline/engine.js';
import { ttlHealth } from '../../../src/pipeline/ttl-health.js';
import { batch, quiet, RecordingSink } from './fixtures.js';
import { entry, linkedModules } from './linked-modules.js';

const SECRET_KEY = 'USER#alice@example.com';

async function ttlWarnings(logImages: boolean) {
  const lines: Record<string, unknown>[] = [];
  const logger = createJsonLogger({
    logImages,
    destination: { write: (line) => lines.push(JSON.parse(line)) },
  });
  await processBatch(
    batch(1, () => ({ pk: SECRET_KEY, ttl: { S: '1767225600' } })),
    {
      ...quiet,
      logger,
      logImages,
      ttlAttribute: ttlHealth('expiresAt'),
      routes: [{ name: 'all', when: 'insert', to: new RecordingSink('all') }],
    },
  );
  return lines.filter((l) => l.ttlProblem !== undefined);
}

describe('the TTL-health warning', () => {
  it('names the record and its key attributes, not their values nor the TTL value, by default', async () => {
    const [warning, ...rest] = await ttlWarnings(false);
    expect(rest).toEqual([]);
    expect(warning).toMatchObject({
      eventID: 'event-0',
      keyAttributes: ['pk'],
      ttlAttribute: 'expiresAt',
      ttlProblem: 'not-a-number',
    });
    const text = JSON.stringify(warning);
    expect(text).not.toContain('alice');
    expect(text).not.toContain('1767225600');
    expect(warning).not.toHaveProperty('Keys');
  });

  it('logs the keys and the image with logImages', async () => {
    const [warning] = await ttlWarnings(true);
    expect(warning).toMatchObject({ Keys: { pk: { S: SECRET_KEY } }, NewImage: expect.any(Object) });
  });
});

describe('ttlHealth()', () => {
  it('links the check (and the TTL rules) only into a handler that calls it', async () => {
    const handler = (option: string) =>
      `import { createStreamHandler, MemorySink, ttlHealth } from ${JSON.stringify(entry)};\n` +
      `void ttlHealth;\nexport const handler = createStreamHandler({ ${option}routes: [{ when: 'ttl-delete', to: new MemorySink() }] });\n`;
    const modules = ['src/pipeline/ttl-health.ts', 'src/records/check-ttl.ts'];
    const without = await linkedModules(handler(''));
    for (const module of modules) expect(without).not.toContain(module);
    const withCheck = await linkedModules(handler("ttlAttribute: ttlHealth('expiresAt'), "));
    for (const module of modules) expect(withCheck).toContain(module);
  });

  it('is how the attribute is given: a bare name is refused at configuration time, naming ttlHealth()', () => {
    const routes = [{ when: 'insert' as const, to: new RecordingSink('all') }];
    // @ts-expect-error the attribute is given as ttlHealth('expiresAt')
    expect(() => createPipeline({ ...quiet, routes, ttlAttribute: 'expiresAt' })).toThrow(
      /pipeline: option 'ttlAttribute' must be a TTL health check made by ttlHealth\(\) \(import \{ ttlHealth \} from 'tidewater'; ttlAttribute: ttlHealth\('expiresAt'\)\).*got the string "expiresAt"/,
    );
    expect(() => ttlHealth('')).toThrow(InvalidOptionsError);
    expect(() => ttlHealth('')).toThrow(/ttlHealth: option 'attribute' must be a non-empty string/);
    expect(ttlHealth('expiresAt').attribute).toBe('expiresAt');
  });
});
