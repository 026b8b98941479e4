import { readFile } from 'node:fs/promises';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { MemorySink } from '../../../src/sinks/index.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import type { Sink } from '../../../src/sinks/types.js';

type KeyValueSink = Sink & { readonly store: Map<string, ClassifiedRecord> };

/**
 * The custom sink of docs/sinks.md, taken from the docs themselves (transpiled, its type-only
 * imports dropped), so the example a reader copies is the one the kit checks.
 */
async function sinkFromDocs(): Promise<new (store: Map<string, ClassifiedRecord>) => KeyValueSink> {
  const docs = await readFile(new URL('../../../docs/sinks.md', import.meta.url), 'utf8');
  const source = /```ts\n(\/\/ key-value-sink\.ts[^\n]*\n[\s\S]*?)\n\/\/ key-value-sink\.test\.ts/.exec(
    docs,
  )?.[1];
  if (source === undefined) throw new Error('docs/sinks.md: the key-value-sink.ts example is missing');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const module = await import(`data:text/javascript;base64,${Buffer.from(js).toString('base64')}`);
  return module.KeyValueSink;
}

const DocsKeyValueSink = await sinkFromDocs();

describe('the custom sink example of docs/sinks.md', () => {
  it('is the class the docs show', () => {
    const sink = new DocsKeyValueSink(new Map());
    expect(sink.name).toBe('key-value');
  });
});

runSinkTestKit({
  name: 'KeyValueSink (docs example)',
  create: () => new DocsKeyValueSink(new Map()),
  read: (sink) => [...sink.store.keys()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
});

// The failure-injection example from docs/sinks.md, verbatim but for imports.
const failOnce = new Set<string>();
runSinkTestKit({
  name: 'MemorySink with injected failures (docs example)',
  create: () => new MemorySink({ failWhen: (r) => failOnce.delete(r.sequenceNumber) }), // fails each once
  read: (sink) => sink.records,
  injectFailures: (_sink, sequenceNumbers) => {
    for (const s of sequenceNumbers) failOnce.add(s);
  },
});
