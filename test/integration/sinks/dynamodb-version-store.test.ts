import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { keyIdentity } from '../../../src/records/key-identity.js';
import { DynamoDbVersionStore } from '../../../src/sinks/dynamodb-version-store.js';
import { MemorySink } from '../../../src/sinks/memory-sink.js';
import { runSinkTestKit } from '../../../src/sinks/testkit.js';
import type { Sink } from '../../../src/sinks/types.js';
import { versionGuard } from '../../../src/sinks/version-guard.js';
import { createTestTable, localClients } from '../../support/aws.js';

const { dynamodb } = localClients();

const inner = new WeakMap<Sink, MemorySink>();
runSinkTestKit({
  name: 'versionGuard(MemorySink, DynamoDbVersionStore)',
  largeBatch: 1_000,
  create: async () => {
    const table = await createTestTable(dynamodb);
    const memory = new MemorySink();
    const guarded = versionGuard(memory, {
      store: new DynamoDbVersionStore({ tableName: table.tableName, client: dynamodb }),
    });
    inner.set(guarded, memory);
    return guarded;
  },
  read: (sink) => inner.get(sink)?.records ?? [],
});

describe('DynamoDbVersionStore', () => {
  it('commits only a newer version, reads back more than one BatchGetItem holds, and expires tombstones', async () => {
    const table = await createTestTable(dynamodb);
    const store = new DynamoDbVersionStore({
      tableName: table.tableName,
      client: dynamodb,
      tombstoneSeconds: 3_600,
    });
    expect(await store.commit('a', '00000000002.1', false)).toBe(true);
    expect(await store.commit('a', '00000000002.1', false)).toBe(false);
    expect(await store.commit('a', '00000000001.1', false)).toBe(false);
    expect(await store.commit('a', '00000000002.0', true)).toBe(false);
    expect(await store.commit('a', '00000000003.1', true)).toBe(true);
    const tombstone = await dynamodb.send(
      new GetItemCommand({ TableName: table.tableName, Key: { pk: { S: 'a' } } }),
    );
    expect(tombstone.Item?.deleted).toEqual({ BOOL: true });
    expect(Number(tombstone.Item?.expiresAt?.N)).toBeGreaterThan(Date.now() / 1000);
    // A newer write replaces the tombstone, expiry and all.
    expect(await store.commit('a', '00000000004.1', false)).toBe(true);
    const live = await dynamodb.send(
      new GetItemCommand({ TableName: table.tableName, Key: { pk: { S: 'a' } } }),
    );
    expect(live.Item?.expiresAt).toBeUndefined();
    const keys = Array.from({ length: 230 }, (_, i) => `k${i}`);
    for (const [i, key] of keys.entries())
      if (i % 2 === 0) await store.commit(key, `0000000000${i % 10}.1`, false);
    const held = await store.get([...keys, 'a']);
    expect(held.size).toBe(116);
    expect(held.get('k4')).toBe('00000000004.1');
    expect(held.get('a')).toBe('00000000004.1');
    expect(held.has('k1')).toBe(false);
    await table.drop();
  });

  it('keeps the version of an item whose keys are near DynamoDB limits (an identity past a partition key 2,048 bytes)', async () => {
    const table = await createTestTable(dynamodb);
    const store = new DynamoDbVersionStore({ tableName: table.tableName, client: dynamodb });
    // A 2,048-byte partition key and a 1,024-byte sort key, in the guard's key identity; two
    // such items share their first 3,000 characters.
    const [a, b] = ['a', 'b'].map((last) =>
      keyIdentity({ pk: { S: 'p'.repeat(2_048) }, sk: { S: `${'é'.repeat(511)}${last}` } }),
    ) as [string, string];
    expect(Buffer.byteLength(a)).toBeGreaterThan(3_072);
    expect(await store.commit(a, '00000000002.1', false)).toBe(true);
    expect(await store.commit(a, '00000000001.1', false)).toBe(false);
    expect(await store.commit(b, '00000000001.1', true)).toBe(true);
    const held = await store.get([a, b, 'short']);
    // BatchGetItem answers in no set order.
    expect(new Map([...held].sort())).toEqual(
      new Map([
        [a, '00000000002.1'],
        [b, '00000000001.1'],
      ]),
    );
    expect(held.size).toBe(2);
    await table.drop();
  });

  it('fails loudly on a missing table name or an unknown option', () => {
    expect(() => new DynamoDbVersionStore({} as never)).toThrow(InvalidOptionsError);
    expect(() => new DynamoDbVersionStore({ tableName: 't', tombstone: 1 } as never)).toThrow(
      /unknown option 'tombstone'/,
    );
  });
});
