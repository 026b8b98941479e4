import { describe, expect, inject, it } from 'vitest';
import { startDynamoDbLocal } from '../../../../src/local/servers/dynamodb-local.js';
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
