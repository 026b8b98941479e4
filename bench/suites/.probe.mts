import { BatchWriteItemCommand, CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal } from '../../src/local/dynamodb-local.js';
const server = await startDynamoDbLocal();
const config = { endpoint: server.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
const db = new DynamoDBClient(config); const st = new DynamoDBStreamsClient(config);
const c = await db.send(new CreateTableCommand({ TableName: 'ppp1', BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }));
for (let s = 0; s < 20000; s += 25) { const r = []; for (let i = s; i < s + 25; i++) r.push({ PutRequest: { Item: { pk: { S: `i${i}` }, p: { S: 'x'.repeat(200) } } } }); await db.send(new BatchWriteItemCommand({ RequestItems: { ppp1: r } })); }
const arn = c.TableDescription!.LatestStreamArn!;
for (let round = 0; round < 4; round++) {
const d = await st.send(new DescribeStreamCommand({ StreamArn: arn }));
let it = (await st.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: d.StreamDescription!.Shards![0]!.ShardId, ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator;
const sizes: number[] = []; const times: number[] = [];
while (it) { const t = performance.now(); const p = await st.send(new GetRecordsCommand({ ShardIterator: it, Limit: 1000 })); times.push(performance.now() - t); const n = p.Records?.length ?? 0; sizes.push(n); if (!n) break; it = p.NextShardIterator; }
// raw fetch timing, no SDK parse
console.log('sizes', sizes.length, 'ms', times.map(Math.round).join(','));
}
await server.stop();
