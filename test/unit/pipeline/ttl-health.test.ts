import { describe, expect, it } from 'vitest';
import { createJsonLogger } from '../../../src/logging/json-logger.js';
import { processBatch } from '../../../src/pipeline/engine.js';
import { batch, quiet, RecordingSink } from './fixtures.js';

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
      ttlAttribute: 'expiresAt',
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
