import { describe, expect, it } from 'vitest';
import { compileConfig } from '../../../src/pipeline/compile.js';
import { processBatch, sinkTracer } from '../../../src/pipeline/index.js';
import type { TracerLike } from '../../../src/pipeline/tracing.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import { batch, quiet } from './fixtures.js';
import { entry, linkedModules } from './linked-modules.js';

/** A tracer that keeps what was opened on it (the X-Ray round trip is in test/integration). */
function recordingTracer(enabled = true) {
  const opened: { name: string; annotations: Record<string, unknown>; errors: string[]; closed: boolean }[] =
    [];
  const tracer: TracerLike = {
    isTracingEnabled: () => enabled,
    getSegment: () => ({
      addNewSubsegment(name: string) {
        const entry = {
          name,
          annotations: {} as Record<string, unknown>,
          errors: [] as string[],
          closed: false,
        };
        opened.push(entry);
        return {
          addAnnotation: (key: string, value: unknown) => {
            entry.annotations[key] = value;
          },
          addError: (error: Error) => void entry.errors.push(error.message),
          close: () => {
            entry.closed = true;
          },
        };
      },
    }),
  };
  return { tracer, opened };
}

describe('tracing sink writes', () => {
  it('costs nothing without a tracer: the sinks are called as they are', () => {
    const sink = new MemorySink();
    expect(compileConfig({ routes: [{ when: 'insert', to: sink }] }).sinks[0]).toBe(sink);
  });

  it('records a throwing write on its subsegment, and closes it', async () => {
    const { tracer, opened } = recordingTracer();
    const broken = { name: 'broken', write: () => Promise.reject(new Error('down')) };
    const response = await processBatch(batch(2), {
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      tracer: sinkTracer(tracer),
      routes: [{ when: 'insert', to: broken }],
    });
    expect(response.batchItemFailures).toHaveLength(1);
    expect(opened).toEqual([
      {
        name: '## sink broken',
        annotations: { sink: 'broken', records: 2, failed: 2 },
        errors: ['down'],
        closed: true,
      },
    ]);
  });

  it('opens nothing when the tracer is disabled (outside Lambda, POWERTOOLS_TRACE_ENABLED=false)', async () => {
    const { tracer, opened } = recordingTracer(false);
    const sink = new MemorySink();
    await processBatch(batch(2), {
      ...quiet,
      tracer: sinkTracer(tracer),
      routes: [{ when: 'insert', to: sink }],
    });
    expect(sink.records).toHaveLength(2);
    expect(opened).toEqual([]);
  });

  it('refuses a tracer that is not one', () => {
    expect(() => sinkTracer({} as never)).toThrow(/^sinkTracer: option 'tracer' must be a Powertools Tracer/);
  });

  it('refuses a bare tracer as the option, naming sinkTracer() (which links the tracing)', () => {
    const { tracer } = recordingTracer();
    expect(() =>
      compileConfig({ tracer: tracer as never, routes: [{ when: 'insert', to: new MemorySink() }] }),
    ).toThrow(
      /option 'tracer' must be a tracer wrapped by sinkTracer\(\) \(import \{ sinkTracer \} from 'tidewater'/,
    );
  });

  it('links the tracing only into a handler that uses it', async () => {
    const handler = (option: string) =>
      `import { createStreamHandler, MemorySink, sinkTracer } from ${JSON.stringify(entry)};\n` +
      `void sinkTracer;\nconst tracer = { getSegment: () => undefined };\nvoid tracer;\n` +
      `export const handler = createStreamHandler({ ${option}routes: [{ when: 'insert', to: new MemorySink() }] });\n`;
    const untraced = await linkedModules(handler(''));
    expect(untraced).toContain('src/pipeline/engine.ts');
    expect(untraced).not.toContain('src/pipeline/traced-sink.ts');
    expect(await linkedModules(handler('tracer: sinkTracer(tracer), '))).toContain(
      'src/pipeline/traced-sink.ts',
    );
  });
});
