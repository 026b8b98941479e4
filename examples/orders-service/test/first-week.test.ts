// The first week, against the installed package (issue 38): a test context with no options, the
// fault-injection error from the test kit, and an import written against an older version failing
// with the name of what to import instead.
import { MemorySink, MovedExportError, parseStreamEvent, TidewaterError } from 'tidewater';
import * as local from 'tidewater/local';
import { createLambdaContext, InjectedSinkFailure, streamEvents } from 'tidewater/testing';
import { describe, expect, it } from 'vitest';

describe('tidewater/testing in a user project', () => {
  it('createLambdaContext() needs no options (item 12)', () => {
    const context = createLambdaContext();
    expect(context.functionName).toBe('test-function');
    expect(context.invokedFunctionArn).toMatch(/^arn:aws:lambda:[a-z0-9-]+:\d{12}:function:test-function$/);
    expect(Number(context.memoryLimitInMB)).toBeGreaterThan(0);
    expect(context.getRemainingTimeInMillis()).toBeGreaterThan(0);
  });

  it('a MemorySink failure rule reports the test kit’s InjectedSinkFailure (item 13)', async () => {
    const b = streamEvents({ tableName: 'orders' });
    const [record] = parseStreamEvent(b.event(b.insert({ pk: 'ORDER#1' })));
    const sink = new MemorySink({ failWhen: () => true });
    const result = await sink.write([record!], {});
    expect(result.failed?.[0]?.error).toBeInstanceOf(InjectedSinkFailure);
    expect(result.failed?.[0]?.error).toBeInstanceOf(TidewaterError);
  });
});

describe('an import from an older version (item 16)', () => {
  it('fails naming the replacement, not with a missing-export link error', () => {
    const old = local.StreamEventBuilder as unknown as new (options: object) => unknown;
    expect(() => new old({ tableName: 'orders' })).toThrow(MovedExportError);
    expect(() => new old({ tableName: 'orders' })).toThrow(
      "import { StreamEventBuilder } from 'tidewater/testing'",
    );
  });
});
