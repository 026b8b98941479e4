import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  type DescribeStreamCommandOutput,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/local/emulator/clock.js';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import {
  type PollerEvent,
  StreamPoller,
  type StreamPollerOptions,
  type StreamsApi,
} from '../../../../src/local/emulator/poller.js';
import type { LambdaStreamRecord } from '../../../../src/records/types.js';
import { createTestTable, localClients } from '../../../support/aws.js';

const { dynamodb, streams } = localClients();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-poller-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function put(tableName: string, pk: string, extra: Record<string, { S: string }> = {}) {
  await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: pk }, ...extra } }));
}

function collector() {
  const seen: LambdaStreamRecord[] = [];
  const emulator = new EventSourceMappingEmulator({
    batchSize: 10,
    handler: async (event) => {
      seen.push(...event.Records);
    },
  });
  return { seen, emulator, keys: () => seen.map((r) => r.dynamodb.Keys.pk?.S) };
}

/** The run's streams client, except that its `nth` GetRecords call fails with the named error. */
function failGetRecordsOnce(nth: number, name: string, message: string): StreamsApi {
  let getRecords = 0;
  return {
    send: ((command: unknown) => {
      if (command instanceof GetRecordsCommand && ++getRecords === nth) {
        return Promise.reject(Object.assign(new Error(message), { name }));
      }
      return streams.send(command as never);
    }) as StreamsApi['send'],
  };
}

describe('StreamPoller against DynamoDB Local', () => {
  it('delivers INSERT / MODIFY / REMOVE in the Lambda shape and checkpoints the last one', async () => {
    const table = await createTestTable(dynamodb);
    await put(table.tableName, 'a', { v: { S: '1' } });
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: 'a' } },
        UpdateExpression: 'SET v = :v',
        ExpressionAttributeValues: { ':v': { S: '2' } },
      }),
    );
    await dynamodb.send(new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: 'a' } } }));
    const { seen, emulator } = collector();
    const poller = new StreamPoller({ streams, streamArn: table.streamArn, pollIntervalMs: 50 });
    await poller.runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(seen.map((r) => r.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    const first = seen[0] as LambdaStreamRecord;
    expect(first.eventSourceARN).toBe(table.streamArn);
    expect(first.awsRegion).toBe('ddblocal');
    expect(typeof first.dynamodb.ApproximateCreationDateTime).toBe('number');
    expect(seen[1]?.dynamodb.OldImage?.v).toEqual({ S: '1' });
    const checkpoint = poller.checkpoint();
    const shard = Object.values(checkpoint?.shards ?? {})[0];
    expect(shard?.sequenceNumber).toBe(seen[2]?.dynamodb.SequenceNumber);
    await table.drop();
  });

  it('resumes from its checkpoint file after a restart', async () => {
    const table = await createTestTable(dynamodb);
    const file = join(dir, 'resume.json');
    for (const pk of ['a', 'b', 'c']) await put(table.tableName, pk);
    const first = collector();
    await new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file }).runEmulator(
      first.emulator,
      {
        stopWhenCaughtUp: true,
      },
    );
    expect(first.keys()).toEqual(['a', 'b', 'c']);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.streamArn).toBe(table.streamArn);
    for (const pk of ['d', 'e']) await put(table.tableName, pk);
    const second = collector();
    await new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file }).runEmulator(
      second.emulator,
      {
        stopWhenCaughtUp: true,
      },
    );
    expect(second.keys()).toEqual(['d', 'e']);
    await expect(
      new StreamPoller({ streams, streamArn: `${table.streamArn}x`, checkpointFile: file }).run(
        async () => undefined,
        {
          stopWhenCaughtUp: true,
        },
      ),
    ).rejects.toMatchObject({ name: 'CheckpointError' });
    await table.drop();
  });

  it('starts AT / AFTER a sequence number and at LATEST', async () => {
    const table = await createTestTable(dynamodb);
    for (const pk of ['a', 'b', 'c']) await put(table.tableName, pk);
    const all = collector();
    await new StreamPoller({ streams, streamArn: table.streamArn }).runEmulator(all.emulator, {
      stopWhenCaughtUp: true,
    });
    const second = all.seen[1]?.dynamodb.SequenceNumber as string;

    const at = collector();
    await new StreamPoller({
      streams,
      streamArn: table.streamArn,
      startingPosition: { atSequenceNumber: second },
    }).runEmulator(at.emulator, { stopWhenCaughtUp: true });
    expect(at.keys()).toEqual(['b', 'c']);

    const after = collector();
    await new StreamPoller({
      streams,
      streamArn: table.streamArn,
      startingPosition: { afterSequenceNumber: second },
    }).runEmulator(after.emulator, { stopWhenCaughtUp: true });
    expect(after.keys()).toEqual(['c']);

    const latest = collector();
    const controller = new AbortController();
    let firstPoll: () => void = () => undefined;
    const polled = new Promise<void>((resolve) => {
      firstPoll = resolve;
    });
    // Write only once LATEST has been read once, so the new item is after the iterator's position.
    const watching: StreamsApi = {
      send: (async (command: unknown) => {
        const out = await streams.send(command as never);
        if (command instanceof GetRecordsCommand) firstPoll();
        return out;
      }) as StreamsApi['send'],
    };
    const run = new StreamPoller({
      streams: watching,
      streamArn: table.streamArn,
      startingPosition: 'LATEST',
      pollIntervalMs: 50,
    }).runEmulator(
      new EventSourceMappingEmulator({
        handler: async (event) => {
          latest.seen.push(...event.Records);
          controller.abort();
        },
      }),
      { signal: controller.signal },
    );
    await polled;
    await put(table.tableName, 'd');
    await run;
    expect(latest.keys()).toEqual(['d']);
    await table.drop();
  });

  it('re-acquires an expired iterator AFTER the last record read, losing and repeating nothing', async () => {
    const table = await createTestTable(dynamodb);
    for (const pk of ['a', 'b', 'c', 'd', 'e']) await put(table.tableName, pk);
    const expiring = failGetRecordsOnce(2, 'ExpiredIteratorException', 'Iterator expired');
    const events: PollerEvent[] = [];
    const { keys, emulator } = collector();
    await new StreamPoller({
      streams: expiring,
      streamArn: table.streamArn,
      limit: 2,
      onEvent: (e) => events.push(e),
    }).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(keys()).toEqual(['a', 'b', 'c', 'd', 'e']);
    const expired = events.find((e) => e.type === 'iterator-expired');
    expect(expired).toMatchObject({ type: 'iterator-expired' });
    expect((expired as { resumeAfter?: string }).resumeAfter).toMatch(/^\d{21}$/);
    await table.drop();
  });

  /**
   * Parent: a real shard closed by disabling the stream. Child: another table's real shard,
   * presented by a wrapper as the parent's child (DynamoDB Local never splits shards itself).
   * `beforeChildRead` runs once, before the first GetRecords on the child (after its iterator).
   */
  /** The sequence number of the `index`th record on a stream, read straight from its real shard. */
  async function sequenceNumberAt(streamArn: string, index: number): Promise<string> {
    const direct = collector();
    await new StreamPoller({ streams, streamArn }).runEmulator(direct.emulator, { stopWhenCaughtUp: true });
    return direct.seen[index]?.dynamodb.SequenceNumber as string;
  }

  async function lineageFixture(beforeChildRead?: (childTableName: string) => Promise<void>) {
    const parentTable = await createTestTable(dynamodb);
    const childTable = await createTestTable(dynamodb);
    for (const pk of ['p1', 'p2', 'p3']) await put(parentTable.tableName, pk);
    await dynamodb.send(
      new UpdateTableCommand({
        TableName: parentTable.tableName,
        StreamSpecification: { StreamEnabled: false },
      }),
    );
    for (const pk of ['c1', 'c2']) await put(childTable.tableName, pk);
    const parentShards = (await streams.send(new DescribeStreamCommand({ StreamArn: parentTable.streamArn })))
      .StreamDescription?.Shards;
    const childShards = (await streams.send(new DescribeStreamCommand({ StreamArn: childTable.streamArn })))
      .StreamDescription?.Shards;
    const parent = parentShards?.[0];
    const child = childShards?.[0];
    expect(parent?.SequenceNumberRange?.EndingSequenceNumber).toBeDefined();
    const childId = 'shardId-00000000000000000002-child';
    // Listed child first and one shard per page, to exercise pagination and lineage ordering.
    const childShard = { ...child, ShardId: childId, ParentShardId: parent?.ShardId };
    let listed = [childShard, parent];
    const childIterators = new Set<string>();
    let hook = beforeChildRead;
    const lineage: StreamsApi = {
      send: (async (command: { input: Record<string, unknown> }) => {
        if (command instanceof DescribeStreamCommand) {
          const start = command.input.ExclusiveStartShardId;
          const index = start ? listed.findIndex((s) => s?.ShardId === start) + 1 : 0;
          const out: Partial<DescribeStreamCommandOutput> = {
            StreamDescription: {
              StreamArn: parentTable.streamArn,
              Shards: [listed[index] as never],
              ...(index < listed.length - 1 ? { LastEvaluatedShardId: listed[index]?.ShardId } : {}),
            },
          };
          return out;
        }
        if (command instanceof GetShardIteratorCommand && command.input.ShardId === childId) {
          const out = await streams.send(
            new GetShardIteratorCommand({
              ...command.input,
              StreamArn: childTable.streamArn,
              ShardId: child?.ShardId,
            } as never),
          );
          if (out.ShardIterator) childIterators.add(out.ShardIterator);
          return out;
        }
        if (
          command instanceof GetRecordsCommand &&
          hook &&
          childIterators.has(command.input.ShardIterator as string)
        ) {
          const run = hook;
          hook = undefined;
          await run(childTable.tableName);
        }
        return streams.send(command as never);
      }) as StreamsApi['send'],
    };
    const order: string[] = [];
    const events: PollerEvent[] = [];
    const emulator = new EventSourceMappingEmulator({
      handler: async (event) => {
        order.push(...event.Records.map((r) => r.dynamodb.Keys.pk?.S as string));
      },
    });
    return {
      parent,
      child,
      childId,
      lineage,
      /**
       * Polls the lineage through `through` (the fixture's emulator unless given) until caught up,
       * its events into `events` unless `options` says otherwise.
       */
      run: async (
        options: Omit<StreamPollerOptions, 'streams' | 'streamArn'> = {},
        through: EventSourceMappingEmulator = emulator,
      ) => {
        const poller = new StreamPoller({
          streams: lineage,
          streamArn: parentTable.streamArn,
          onEvent: (e) => events.push(e),
          ...options,
        });
        await poller.runEmulator(through, { stopWhenCaughtUp: true });
        return poller;
      },
      /** The parent ages out of DescribeStream (24 h after it closed, on AWS). */
      hideParent: () => {
        listed = [childShard];
      },
      order,
      events,
      emulator,
      streamArn: parentTable.streamArn,
      childStreamArn: childTable.streamArn,
      childTableName: childTable.tableName,
      starts: () => events.filter((e) => e.type === 'shard-start'),
      drop: () => Promise.all([parentTable.drop(), childTable.drop()]),
    };
  }

  it('follows a closed parent shard into its child only after the parent is read to its end', async () => {
    const fx = await lineageFixture();
    const file = join(dir, 'lineage.json');
    await fx.run({ checkpointFile: file });
    expect(fx.order).toEqual(['p1', 'p2', 'p3', 'c1', 'c2']);
    expect(fx.starts().map((e) => e.shardId)).toEqual([fx.parent?.ShardId, fx.childId]);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.shards[fx.parent?.ShardId as string]).toEqual({
      finished: true,
      sequenceNumber: fx.parent?.SequenceNumberRange?.EndingSequenceNumber,
    });
    expect(saved.shards[fx.childId].finished).toBeUndefined();
    await fx.drop();
  });

  it('applies LATEST to the child of a parent already closed, instead of replaying the child', async () => {
    const fx = await lineageFixture((childTableName) => put(childTableName, 'c3'));
    const poller = await fx.run({ startingPosition: 'LATEST' });
    expect(fx.order).toEqual(['c3']);
    expect(fx.starts()).toEqual([
      {
        type: 'shard-start',
        shardId: fx.childId,
        parentShardId: fx.parent?.ShardId,
        iteratorType: 'LATEST',
      },
    ]);
    expect(poller.checkpoint()?.shards[fx.parent?.ShardId as string]).toEqual({
      finished: true,
      skipped: true,
    });
    await fx.drop();
  });

  it('applies atSequenceNumber inside the child when the parent ends before it', async () => {
    const fx = await lineageFixture();
    // The child's own sequence numbers, read straight from its real shard.
    const c2 = await sequenceNumberAt(fx.childStreamArn, 1);
    expect(BigInt(c2)).toBeGreaterThan(
      BigInt(fx.parent?.SequenceNumberRange?.EndingSequenceNumber as string),
    );
    await fx.run({ startingPosition: { atSequenceNumber: c2 } });
    expect(fx.order).toEqual(['c2']);
    expect(fx.starts()).toEqual([
      {
        type: 'shard-start',
        shardId: fx.childId,
        parentShardId: fx.parent?.ShardId,
        iteratorType: 'AT_SEQUENCE_NUMBER',
        sequenceNumber: c2,
      },
    ]);
    await fx.drop();
  });

  it('still starts the child at its beginning when the parent was read from a starting position', async () => {
    const fx = await lineageFixture();
    const p2 = await sequenceNumberAt(fx.streamArn, 1);
    await fx.run({ startingPosition: { afterSequenceNumber: p2 } });
    expect(fx.order).toEqual(['p3', 'c1', 'c2']);
    expect(fx.starts().map((e) => e.iteratorType)).toEqual(['AFTER_SEQUENCE_NUMBER', 'TRIM_HORIZON']);
    await fx.drop();
  });

  it('resumes a lineage after a restart: the finished parent is not read again, the child continues', async () => {
    const fx = await lineageFixture();
    const file = join(dir, 'lineage-resume.json');
    await fx.run({ checkpointFile: file });
    expect(fx.order).toEqual(['p1', 'p2', 'p3', 'c1', 'c2']);
    await put(fx.childTableName, 'c3');
    const second = collector();
    const events: PollerEvent[] = [];
    await fx.run({ checkpointFile: file, onEvent: (e) => events.push(e) }, second.emulator);
    expect(second.keys()).toEqual(['c3']);
    const starts = events.filter((e) => e.type === 'shard-start');
    expect(starts).toEqual([
      expect.objectContaining({ shardId: fx.childId, iteratorType: 'AFTER_SEQUENCE_NUMBER' }),
    ]);
    await fx.drop();
  });

  it('starts the child at its beginning when the parent it read has since aged out of the listing', async () => {
    const fx = await lineageFixture();
    const file = join(dir, 'lineage-aged-out.json');
    // A previous run read the parent to its end, then stopped before the child had a record.
    await writeFile(
      file,
      JSON.stringify({
        version: 1,
        streamArn: fx.streamArn,
        shards: {
          [fx.parent?.ShardId as string]: {
            sequenceNumber: fx.parent?.SequenceNumberRange?.EndingSequenceNumber,
            finished: true,
          },
        },
      }),
    );
    fx.hideParent();
    // LATEST applies to shards this poller never read into; this child follows a read parent.
    await fx.run({ startingPosition: 'LATEST', checkpointFile: file });
    expect(fx.order).toEqual(['c1', 'c2']);
    expect(fx.starts().map((e) => e.iteratorType)).toEqual(['TRIM_HORIZON']);
    await fx.drop();
  });

  it('restarts at TRIM_HORIZON when the iterator points at trimmed data', async () => {
    const table = await createTestTable(dynamodb);
    for (const pk of ['a', 'b']) await put(table.tableName, pk);
    const trimming = failGetRecordsOnce(1, 'TrimmedDataAccessException', 'past the trim horizon');
    const events: PollerEvent[] = [];
    const { keys, emulator } = collector();
    await new StreamPoller({
      streams: trimming,
      streamArn: table.streamArn,
      onEvent: (e) => events.push(e),
    }).runEmulator(emulator, { stopWhenCaughtUp: true });
    expect(keys()).toEqual(['a', 'b']);
    expect(events.filter((e) => e.type === 'trimmed')).toHaveLength(1);
    await table.drop();
  });

  it('an abort ends the run even while a batch is retried forever (MaximumRetryAttempts -1)', async () => {
    const table = await createTestTable(dynamodb);
    await put(table.tableName, 'poison');
    const file = join(dir, 'abort-poison.json');
    const controller = new AbortController();
    let calls = 0;
    const emulator = new EventSourceMappingEmulator({
      handler: async () => {
        if (++calls === 3) controller.abort();
        throw new Error('poison');
      },
    });
    const poller = new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file });
    const results = await poller.runEmulator(emulator, { signal: controller.signal });
    expect(calls).toBe(3);
    expect(results).toEqual([]);
    // Nothing was handled: the record stays after the checkpoint for the next run.
    expect(Object.values(poller.checkpoint()?.shards ?? {})).toEqual([]);
    // As docs/local.md shows: the stopped emulator stays stopped, a new one resumes from the file.
    const again = () => new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file });
    await expect(again().runEmulator(emulator, { stopWhenCaughtUp: true })).rejects.toMatchObject({
      name: 'EmulatorStoppedError',
    });
    const resumed = collector();
    await again().runEmulator(resumed.emulator, { stopWhenCaughtUp: true });
    expect(resumed.keys()).toEqual(['poison']);
    await table.drop();
  });

  it('a closed shard stopped during its last batch is not checkpointed finished: a restart delivers the rest', async () => {
    const fx = await lineageFixture();
    const file = join(dir, 'lineage-tail-abort.json');
    const controller = new AbortController();
    const delivered: string[] = [];
    // A batching window (serverless.yml deploys 5 s) on a clock that never moves: p3 stays in
    // the buffer until the closed shard's pages end, so it is the tail batch invoked after that.
    const interrupted = new EventSourceMappingEmulator({
      batchSize: 2,
      maximumBatchingWindowInSeconds: 5,
      clock: new ManualClock(),
      handler: async (event) => {
        const keys = event.Records.map((r) => r.dynamodb.Keys.pk?.S as string);
        if (keys.includes('p3')) {
          // Ctrl-C while the tail batch is running and failing: stop() ends its retries.
          controller.abort();
          throw new Error('interrupted');
        }
        delivered.push(...keys);
      },
    });
    const results = await new StreamPoller({
      streams: fx.lineage,
      streamArn: fx.streamArn,
      checkpointFile: file,
    }).runEmulator(interrupted, { signal: controller.signal, stopWhenCaughtUp: true });
    expect(delivered).toEqual(['p1', 'p2']);
    expect(results).toEqual([]);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.shards[fx.parent?.ShardId as string].finished).toBeUndefined();

    await fx.run({ checkpointFile: file });
    expect(fx.order).toEqual(['p3', 'c1', 'c2']);
    expect(fx.starts()).toEqual([
      expect.objectContaining({ shardId: fx.parent?.ShardId, iteratorType: 'AFTER_SEQUENCE_NUMBER' }),
      expect.objectContaining({ shardId: fx.childId, iteratorType: 'TRIM_HORIZON' }),
    ]);
    const resumed = JSON.parse(await readFile(file, 'utf8'));
    expect(resumed.shards[fx.parent?.ShardId as string]).toEqual({
      finished: true,
      sequenceNumber: fx.parent?.SequenceNumberRange?.EndingSequenceNumber,
    });
    await fx.drop();
  });

  it('a shard that fails stops the others and the run rejects, even with open shards and no signal', async () => {
    const failing = await createTestTable(dynamodb);
    const open = await createTestTable(dynamodb);
    await put(failing.tableName, 'bad');
    await put(open.tableName, 'fine');
    const describeOne = async (streamArn: string) =>
      (await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }))).StreamDescription
        ?.Shards?.[0];
    const failingShard = await describeOne(failing.streamArn);
    const openShard = await describeOne(open.streamArn);
    const openId = 'shardId-00000000000000000009-sibling';
    let testOver = false;
    // The regression this test is about: the failure is reported, yet the open shard goes on
    // polling and the run never ends. Counted in GetRecords calls made after the failure, not in
    // seconds: a run that stops as it should makes at most the one call already in flight.
    let failureReported = false;
    let pollsAfterFailure = 0;
    let stillPolling: () => void = () => undefined;
    const polledOn = new Promise<{ settled: string }>((resolve) => {
      stillPolling = () => resolve({ settled: 'still polling: 50 GetRecords after the failure' });
    });
    // One stream, two sibling shards: the second is another table's real (open) shard.
    const siblings: StreamsApi = {
      send: (async (command: { input: Record<string, unknown> }) => {
        // Should the run outlive the test (the regression this test is about), the open shard's
        // next call fails and so ends it, instead of it polling into the tests after this one.
        if (testOver) throw new Error('the test is over');
        if (command instanceof GetRecordsCommand && failureReported && ++pollsAfterFailure === 50) {
          stillPolling();
        }
        if (command instanceof DescribeStreamCommand) {
          const out: Partial<DescribeStreamCommandOutput> = {
            StreamDescription: {
              StreamArn: failing.streamArn,
              Shards: [failingShard as never, { ...openShard, ShardId: openId } as never],
            },
          };
          return out;
        }
        if (command instanceof GetShardIteratorCommand && command.input.ShardId === openId) {
          return streams.send(
            new GetShardIteratorCommand({
              ...command.input,
              StreamArn: open.streamArn,
              ShardId: openShard?.ShardId,
            } as never),
          );
        }
        return streams.send(command as never);
      }) as StreamsApi['send'],
    };
    const emulator = new EventSourceMappingEmulator({
      batchSize: 1,
      maximumRetryAttempts: 0,
      onFailure: {
        send: async () => {
          failureReported = true;
          throw new Error('SQS down');
        },
      },
      handler: async (event) => {
        if (event.Records[0]?.dynamodb.Keys.pk?.S === 'bad') throw new Error('poison');
      },
    });
    const run = new StreamPoller({
      streams: siblings,
      streamArn: failing.streamArn,
      pollIntervalMs: 20,
    }).runEmulator(emulator);
    // A regression means the run never ends (the open shard polls forever): the open shard's
    // polls after the failure turn that into a failed assertion saying so.
    const outcome = await Promise.race([
      run.then(
        () => ({ settled: 'resolved' }),
        (error: unknown) => ({ settled: 'rejected', error }),
      ),
      polledOn,
    ]).finally(() => {
      testOver = true;
    });
    expect(outcome).toEqual({ settled: 'rejected', error: expect.objectContaining({ message: 'SQS down' }) });
    await run.catch(() => undefined);
    await Promise.all([failing.drop(), open.drop()]);
  });

  it('a failing DescribeStream ends the run with every shard it started stopped, none polling on unobserved', async () => {
    const table = await createTestTable(dynamodb);
    await put(table.tableName, 'a');
    let describes = 0;
    const flaky: StreamsApi = {
      send: ((command: unknown) => {
        if (command instanceof DescribeStreamCommand && ++describes === 2) {
          return Promise.reject(
            Object.assign(new Error('rate exceeded'), { name: 'LimitExceededException' }),
          );
        }
        return streams.send(command as never);
      }) as StreamsApi['send'],
    };
    let shardDone = false;
    const run = new StreamPoller({
      streams: flaky,
      streamArn: table.streamArn,
      pollIntervalMs: 20,
      describeIntervalMs: 20,
    }).run(async (shard) => {
      try {
        for await (const _page of shard.pages);
      } finally {
        shardDone = true;
      }
    });
    await expect(run).rejects.toThrow('rate exceeded');
    expect(shardDone).toBe(true);
    await table.drop();
  });
});
