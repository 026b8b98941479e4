import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { defineOptions } from '../../core/index.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './dynamodb-local.js';
import { LocalServerStartError } from './errors.js';

/**
 * A local Kinesis Data Streams API: kinesalite (an optional peer dependency) in memory, on
 * loopback. It implements the stream and record operations the local runtime needs (CreateStream,
 * PutRecord(s), ListShards, DescribeStream, GetShardIterator, GetRecords) with Kinesis's own
 * partition-key hashing and sequence numbers; docs/local.md says why it was chosen.
 */
export interface KinesisServer {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Options of startKinesisServer: port and shard limit. */
export interface KinesisServerOptions {
  /** Default: a free port the OS picks. */
  port?: number;
  /**
   * Open shards an account may hold, over all streams (kinesalite refuses CreateStream past it,
   * as Kinesis does past its shard quota); default 50.
   */
  shardLimit?: number;
}

type Kinesalite = (options: Record<string, unknown>) => Server;

const readOptions = defineOptions<KinesisServerOptions>()('startKinesisServer', {
  port: { kind: 'integer', min: 0, max: 65_535 },
  shardLimit: { kind: 'integer', min: 1, max: 10_000, default: 50 },
});

/** Starts a local Kinesis server (kinesalite) and returns its endpoint. */
export async function startKinesisServer(input: KinesisServerOptions = {}): Promise<KinesisServer> {
  const options = readOptions(input);
  const require = createRequire(import.meta.url);
  let kinesalite: Kinesalite;
  try {
    kinesalite = require('kinesalite');
  } catch {
    throw new LocalServerStartError(
      'Kinesis server',
      'the package `kinesalite` is not installed (npm i -D kinesalite)',
    );
  }
  // Streams are ACTIVE at once: CREATING for half a second (kinesalite's default) only makes
  // every caller poll, and Kinesis's own delay is not a behaviour a local test can rely on.
  const server = kinesalite({
    createStreamMs: 0,
    deleteStreamMs: 0,
    updateStreamMs: 0,
    shardLimit: options.shardLimit,
  });
  // Port 0 lets the kernel pick a free port at bind time: no window for another process to take it.
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new LocalServerStartError('Kinesis server', String(error))));
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Clients keep connections alive; close() alone would wait for them.
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}

/**
 * A Kinesis client for a local endpoint. The SDK's Kinesis client speaks HTTP/2 by default (for
 * SubscribeToShard); kinesalite speaks HTTP/1.1 only, and the HTTP/2 handler fails against it with
 * `ERR_HTTP2_ERROR: Protocol error` (kinesalite issue 118), so this one uses the HTTP/1.1 handler.
 */
export function localKinesisClient(endpoint: string): KinesisClient {
  return new KinesisClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint,
    requestHandler: new NodeHttpHandler(),
  });
}
