// validated() is how a handler opts into item schemas: it links the validation stage, so a handler
// whose routes check no image (an archive of the raw records) does not carry it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, validated } from '../../../src/pipeline/index.js';
import { quiet, RecordingSink } from './fixtures.js';
import { entry, linkedModules } from './linked-modules.js';

const VALIDATION_MODULES = ['src/pipeline/validate-images.ts'];

describe('validated', () => {
  it('links the validation stage only into a handler that uses it', async () => {
    const handler = (route: string) =>
      `import { createStreamHandler, MemorySink, validated } from ${JSON.stringify(entry)};\n` +
      `void validated;\nconst schema = { '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value }) } };\n` +
      `void schema;\nexport const handler = createStreamHandler({ routes: [{ when: 'insert', ${route}to: new MemorySink() }] });\n`;
    const unchecked = await linkedModules(handler(''));
    expect(unchecked).toContain('src/pipeline/engine.ts');
    for (const module of VALIDATION_MODULES) expect(unchecked).not.toContain(module);
    const checked = await linkedModules(handler('item: validated(schema), '));
    for (const module of VALIDATION_MODULES) expect(checked).toContain(module);
  });

  it('hands the stage and the unwrapped schema to the pipeline', () => {
    const order = z.object({ pk: z.string() });
    const pipeline = createPipeline({
      ...quiet,
      routes: [{ when: 'insert', item: validated(order), to: new RecordingSink('orders') }],
    });
    expect(pipeline.config.schemas.map((s) => [s.schema, s.vendor, s.label])).toEqual([
      [order, 'zod', 'orders'],
    ]);
    expect(pipeline.config.validate).toBeTypeOf('function');
    expect(
      createPipeline({ ...quiet, routes: [{ when: 'insert', to: new RecordingSink('raw') }] }).config
        .validate,
    ).toBe(undefined);
  });
});
