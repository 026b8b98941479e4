import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import {
  LAUNCHER_CLASS,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoDbLocal,
} from '../../../../src/local/servers/dynamodb-local.js';
import { listeningAddresses, listensOnLoopbackOnly } from '../../../support/listening.js';

const portOf = (endpoint: string) => Number(new URL(endpoint).port);

// DynamoDB Local checks no signature: on any other interface the LAN could list and read tables.
describe('DynamoDB Local listens on loopback only', () => {
  it('startDynamoDbLocal (what start and demo run)', async () => {
    const server = await startDynamoDbLocal();
    try {
      expect(listeningAddresses(server.port)).not.toEqual([]);
      expect(listensOnLoopbackOnly(server.port), listeningAddresses(server.port).join()).toBe(true);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("the tests' global setup, and its S3 server", () => {
    for (const endpoint of [inject('dynamoEndpoint'), inject('s3Endpoint')])
      expect(listensOnLoopbackOnly(portOf(endpoint)), listeningAddresses(portOf(endpoint)).join()).toBe(true);
  });
});

/** Live (not zombie) processes whose command line runs the launcher on `port`, as `ps` lists them. */
function launchersOnPort(port: number): number[] {
  const listing = spawnSync('ps', ['-A', '-o', 'pid=,stat=,args='], { encoding: 'utf8' }).stdout;
  const wanted = ` ${LAUNCHER_CLASS} -port ${port} `;
  return listing
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null && !match[2]?.startsWith('Z') && `${match[3]} `.includes(wanted))
    .map((match) => Number(match?.[1]));
}

async function until(condition: () => boolean, boundMs: number): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return condition();
}

describe('DynamoDB Local does not outlive the process that started it', () => {
  it('a process killed with SIGKILL after startDynamoDbLocal leaves no DynamoDB Local running', async () => {
    const module = new URL('../../../../src/local/servers/dynamodb-local.ts', import.meta.url).href;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `const { startDynamoDbLocal } = await import(${JSON.stringify(module)});
           const server = await startDynamoDbLocal();
           process.stdout.write('PORT ' + server.port + '\\n');
           setInterval(() => undefined, 60_000);`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /PORT (\d+)/.exec(out);
          if (match) resolve(Number(match[1]));
        });
        child.once('exit', () =>
          reject(new Error(`the child exited before DynamoDB Local answered: ${out}`)),
        );
      });
      expect(launchersOnPort(port)).toHaveLength(1);
      child.kill('SIGKILL');
      // A generous bound for a loaded machine; the launcher exits as soon as its stdin closes.
      expect(await until(() => launchersOnPort(port).length === 0, 60_000), `java on port ${port}`).toBe(
        true,
      );
    } finally {
      child.kill('SIGKILL');
    }
  }, 180_000);
});

describe('DynamoDB Local database files are their owner only', () => {
  it('dbPath (made by startDynamoDbLocal) is 0700 and the files DynamoDB Local writes in it 0600', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tidewater-dbpath-'));
    const dbPath = join(root, 'db');
    const server = await startDynamoDbLocal({ dbPath });
    const client = new DynamoDBClient({
      endpoint: server.endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      await client.send(
        new CreateTableCommand({
          TableName: 'modes',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      expect((await stat(dbPath)).mode & 0o777).toBe(0o700);
      const files = await readdir(dbPath);
      expect(files.length).toBeGreaterThan(0);
      const modes = await Promise.all(
        files.map(async (name) => `${name} ${((await stat(join(dbPath, name))).mode & 0o777).toString(8)}`),
      );
      expect(modes).toEqual(files.map((name) => `${name} 600`));
    } finally {
      client.destroy();
      await server.stop();
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);
});
