import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { isLocalEndpoint } from '../../../../src/local/servers/endpoint.js';

// Capture's caught-up rule depends on it: only DynamoDB Local's empty page means the end.
describe('isLocalEndpoint', () => {
  it('tells a local endpoint from AWS by the client endpoint, then the SDK endpoint variables', async () => {
    const local = new DynamoDBStreamsClient({ region: 'us-east-1', endpoint: 'http://localhost:8000' });
    const aws = new DynamoDBStreamsClient({ region: 'us-east-1' });
    expect(await isLocalEndpoint(local, {})).toBe(true);
    expect(await isLocalEndpoint(aws, {})).toBe(false);
    expect(await isLocalEndpoint(aws, { AWS_ENDPOINT_URL_DYNAMODB_STREAMS: 'http://127.0.0.1:8000' })).toBe(
      true,
    );
    expect(await isLocalEndpoint(aws, { AWS_ENDPOINT_URL: 'http://ddb.localhost:8000' })).toBe(true);
    expect(
      await isLocalEndpoint(aws, { AWS_ENDPOINT_URL: 'https://streams.dynamodb.us-east-1.amazonaws.com' }),
    ).toBe(false);
    expect(await isLocalEndpoint({ send: aws.send.bind(aws) }, {})).toBe(false);
    local.destroy();
    aws.destroy();
  });
});
