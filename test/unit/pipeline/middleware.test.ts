import middy from '@middy/core';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createStreamHandler, streamProcessor } from '../../../src/pipeline/index.js';
import { batch, quiet, RecordingSink, seq } from './fixtures.js';

const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

describe('middy integration', () => {
  it('createStreamHandler returns a middy handler that more middlewares can wrap', async () => {
    const sink = new RecordingSink('s', (s) => s === seq(1));
    const seen: string[] = [];
    const handler = createStreamHandler({
      ...quiet,
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      routes: [{ when: 'insert', to: sink }],
    }).use({
      before: () => void seen.push('before'),
      after: (request) => void seen.push(`after:${request.response?.batchItemFailures.length}`),
    });
    const response = await handler(batch(3) as DynamoDBStreamEvent, context);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: seq(1) }] });
    expect(seen).toEqual(['before', 'after:1']);
  });

  it("answers by the pipeline's deadline, not middy's early timeout (which would fail the batch)", async () => {
    // 5 ms left: middy's default early timeout (5 ms) would fire at once, while the sink is still
    // writing, and turn the invocation into an error; the pipeline's own margin is 0 here.
    const nearlyOut = { awsRequestId: 'r', getRemainingTimeInMillis: () => 5 } as unknown as Context;
    const sink = new RecordingSink('slow');
    const slow = {
      name: 'slow',
      write: async (records: readonly { sequenceNumber: string }[]) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        sink.calls.push(records.map((r) => r.sequenceNumber));
        return undefined;
      },
    };
    const handler = createStreamHandler({
      ...quiet,
      deadlineMarginMs: 0,
      routes: [{ when: 'insert', to: slow }],
    });
    const response = await handler(batch(2) as DynamoDBStreamEvent, nearlyOut);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sink.calls).toEqual([[seq(0), seq(1)]]);
  });

  it('streamProcessor answers early inside a user-owned middy stack', async () => {
    const sink = new RecordingSink('s');
    let handlerCalled = false;
    const handler = middy<DynamoDBStreamEvent, unknown, Error, Context>()
      .use({
        before: (request) => {
          request.event.Records = request.event.Records.slice(1);
        },
      })
      .use(streamProcessor({ ...quiet, routes: [{ when: 'insert', to: sink }] }))
      .handler(() => {
        handlerCalled = true;
      });
    const response = await handler(batch(3) as DynamoDBStreamEvent, context);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sink.calls).toEqual([[seq(1), seq(2)]]);
    expect(handlerCalled).toBe(false);
  });

  it('a thrown batch error reaches middy onError and then Lambda', async () => {
    const errors: string[] = [];
    const handler = createStreamHandler({
      ...quiet,
      routes: [{ when: 'insert', to: new RecordingSink('s') }],
    }).use({
      onError: (request) => void errors.push(request.error?.name ?? ''),
    });
    await expect(
      handler({ Records: [{ eventID: 'x' }] } as unknown as DynamoDBStreamEvent, context),
    ).rejects.toThrow(/no readable dynamodb.SequenceNumber/);
    expect(errors).toEqual(['UnreadableSequenceNumberError']);
  });
});
