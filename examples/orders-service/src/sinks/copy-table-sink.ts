// A sink that keeps a copy of the table's items in another table (a read model, a search index
// stand-in): an insert or modify puts the new image, a delete deletes the key. Idempotent under
// redelivery (a put of the same image, a delete of a key that is gone); ordering against a
// backfill's copies is the version guard's job (see src/handlers/copy.ts).
import { DeleteItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { type ClassifiedRecord, marshall, type Sink, type SinkFailure } from 'tidewater';

export function copyTableSink(options: { tableName: string; client?: DynamoDBClient }): Sink {
  let client = options.client;
  const { tableName } = options;
  return {
    name: 'copy-table',
    async write(records: readonly ClassifiedRecord[], { signal }) {
      client ??= new DynamoDBClient({});
      const failed: SinkFailure[] = [];
      for (const record of records) {
        try {
          if (record.kind === 'user-delete' || record.kind === 'ttl-delete')
            await client.send(new DeleteItemCommand({ TableName: tableName, Key: marshall(record.keys) }), {
              abortSignal: signal,
            });
          else if (record.newImage !== undefined)
            await client.send(new PutItemCommand({ TableName: tableName, Item: marshall(record.newImage) }), {
              abortSignal: signal,
            });
        } catch (error) {
          failed.push({ sequenceNumber: record.sequenceNumber, error });
        }
      }
      return { failed };
    },
  };
}
