// A table of wide items (every attribute type, 38-digit numbers, binaries, sets, nesting) and what
// a backfill's sink must hold of it: the backfill and distributed-map tests fill and compare the same way.
import { BatchWriteItemCommand, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { toJsonAttributeMap } from '../../src/records/convert.js';
import { marshall } from '../../src/records/marshall.js';
import type { AttributeMap, ClassifiedRecord } from '../../src/records/types.js';
import type { Sink } from '../../src/sinks/types.js';

/** Item `i`: one of each attribute type a lossless path must keep. */
export function wideItem(i: number) {
  return marshall(
    {
      pk: `item-${i}`,
      big: 12345678901234567890123456789012345678n,
      bytes: new Uint8Array([i % 256, 0, 255]),
      tags: new Set(['a', `t${i}`]),
      counts: new Set([1n, 99999999999999999999999999999999999999n]),
      nested: { list: [1, 'two', { three: [true, null] }], n: i },
    },
    { binary: 'bytes' },
  );
}

/** Items 0 … n-1 written to `table`, 25 a request. */
export async function fillWideItems(dynamodb: DynamoDBClient, table: string, n: number): Promise<void> {
  for (let from = 0; from < n; from += 25) {
    const puts = [];
    for (let i = from; i < Math.min(n, from + 25); i++)
      puts.push({ PutRequest: { Item: wideItem(i) as never } });
    await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [table]: puts } }));
  }
}

/** The table's items by key, as StateSink holds them: what a backfill's sink should equal. */
export async function tableState(
  dynamodb: DynamoDBClient,
  table: string,
): Promise<Map<string, AttributeMap>> {
  const out = new Map<string, AttributeMap>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({ TableName: table, ExclusiveStartKey: start as never }),
    );
    for (const item of page.Items ?? []) {
      const json = toJsonAttributeMap(item);
      out.set(JSON.stringify({ pk: json.pk }), json);
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return out;
}

/**
 * A sink that stores item state by key, as a search index or a copy would. Records after the
 * first `failAfter` fail, as a sink that went down would.
 */
export class StateSink implements Sink {
  readonly name = 'state';
  readonly state = new Map<string, AttributeMap>();
  readonly origins = new Set<string>();
  writes = 0;
  constructor(readonly failAfter = Number.POSITIVE_INFINITY) {}
  write(records: readonly ClassifiedRecord[]) {
    const failed = [];
    for (const r of records) {
      if (this.writes >= this.failAfter) {
        failed.push({ sequenceNumber: r.sequenceNumber, error: new Error('down') });
        continue;
      }
      this.writes++;
      this.origins.add(JSON.stringify(r.origin));
      const id = JSON.stringify(r.raw.dynamodb.Keys);
      if (r.kind === 'insert' || r.kind === 'modify') this.state.set(id, r.raw.dynamodb.NewImage!);
      else this.state.delete(id);
    }
    return { failed };
  }
}

const noop = () => undefined;
/** A logger that says nothing: failing runs log every record they give up on; the assertions say what happened. */
export const quietLogger = { debug: noop, info: noop, warn: noop, error: noop, child: () => quietLogger };
