import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { toJsonAttributeMap, toSdkAttributeMap } from '../records/convert.js';
import type { AttributeMap } from '../records/types.js';

/** One Scan page of a segment, its items in the JSON shape a stream record carries (binary as base64). */
export interface ScanPage {
  readonly items: readonly AttributeMap[];
}

/**
 * The pages of one segment of a parallel Scan (Segment / TotalSegments), from `after` (the key of
 * the last item done, as ExclusiveStartKey: a Scan continues after any item's key, not only after
 * a page's LastEvaluatedKey) to the segment's end. Strongly consistent reads, so an item written
 * before the scan reached it is read as written.
 */
export async function* scanSegment(
  client: DynamoDBClient,
  table: string,
  segment: number,
  totalSegments: number,
  after: AttributeMap | null,
  pageSize: number | undefined,
): AsyncGenerator<ScanPage> {
  let start = after === null ? undefined : toSdkAttributeMap(after);
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        Segment: segment,
        TotalSegments: totalSegments,
        ConsistentRead: true,
        ExclusiveStartKey: start as never,
        ...(pageSize === undefined ? {} : { Limit: pageSize }),
      }),
    );
    const items = (page.Items ?? []).map((item) => toJsonAttributeMap(item));
    if (items.length !== 0) yield { items };
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
}
