// Keeps the copy table equal to the orders table: the stream's changes, and — through
// `tidewater backfill --handler src/handlers/copy.ts#handler` — the items the table held before.
// The version guard keeps a backfill's older copy from overwriting a newer change, and the reverse.
import { createStreamHandler, route, versionGuard } from 'tidewater';
import { DynamoDbVersionStore } from 'tidewater/version-store';
import { copyTableSink } from '../sinks/copy-table-sink.js';

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export const handler = createStreamHandler({
  routes: [
    route({
      when: ['insert', 'modify', 'user-delete', 'ttl-delete'],
      to: versionGuard(copyTableSink({ tableName: requiredEnv('COPY_TABLE') }), {
        store: new DynamoDbVersionStore({ tableName: requiredEnv('COPY_VERSIONS_TABLE') }),
        // DynamoDB Streams stamps records to the second; DynamoDB Local to the minute.
        creationTimeResolution: Number(process.env.STREAM_TIME_RESOLUTION ?? 1),
      }),
    }),
  ],
});
