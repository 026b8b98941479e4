import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { VoteCounter, VoteRequestFailedError } from '../../../src/votes/index.js';

// A DynamoDB endpoint that answers every read and ADD with a 500 (the ambiguous failure of
// reference 003) and counts what arrives: shows how many requests one votes call really sends
// with the clients the votes code and the aggregator handler build themselves.

let server: Server;
let endpoint: string;
const received = new Map<string, number>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? 'unknown';
    received.set(operation, (received.get(operation) ?? 0) + 1);
    request.resume();
    request.on('end', () => {
      if (operation === 'PutItem') {
        // The layout record: accepted, so castVote gets as far as its ADD.
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        response.end('{}');
        return;
      }
      response.writeHead(500, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-errortype': 'InternalServerError',
      });
      response.end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
          message: 'injected: internal server error',
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  received.clear();
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('the DynamoDB clients the votes code builds', () => {
  it('send a bare ADD once after a 5xx: no SDK retry that could count the vote twice', async () => {
    const counter = new VoteCounter({ tableName: 't', poll: 'p', shards: 2 });
    await expect(counter.castVote('a')).rejects.toMatchObject({ name: 'InternalServerError' });
    expect(received.get('UpdateItem')).toBe(1);
  });

  it('make exactly maxAttempts requests for a retryable read (not maxAttempts × the SDK default 3)', async () => {
    const counter = new VoteCounter({ tableName: 't', poll: 'p', shards: 2, maxAttempts: 2 });
    const error = await counter.getTotal('a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoteRequestFailedError);
    expect(error).toMatchObject({ attempts: 2 });
    expect(received.get('GetItem')).toBe(2);
  });

  it('include the aggregate-votes handler’s client', async () => {
    vi.stubEnv('TABLE_NAME', 't');
    vi.stubEnv('POLL', 'p');
    vi.stubEnv('MAX_ATTEMPTS', '2');
    const { handler } = await import('../../../src/handlers/aggregate-votes.js');
    await expect(handler()).rejects.toMatchObject({ name: 'VoteRequestFailedError', attempts: 2 });
    // The layout read is the first request of a run.
    expect(received.get('GetItem')).toBe(2);
  });
});
