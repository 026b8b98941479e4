// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, expect, inject, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { localClients, uniqueName } from '../../support/aws.js';

const clients = localClients();
afterAll(() => clients.dynamodb.destroy());
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

it("capture in a service folder reads its only stream function's table, by the name serverless.yml gives it", async () => {
  const name = uniqueName('cap');
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-service-'));
  const file = join(dir, 'serverless.yml');
  await writeFile(
    file,
    [
      `service: ${name}`,
      'provider:',
      '  name: aws',
      'functions:',
      '  audit:',
      '    handler: audit.handler',
      '    events:',
      '      - stream: { type: dynamodb, arn: !GetAtt Orders.StreamArn }',
      'resources:',
      '  Resources:',
      '    Orders:',
      '      Type: AWS::DynamoDB::Table',
      '      Properties:',
      '        TableName: ${self:service}-${sls:stage}-orders',
      '        BillingMode: PAY_PER_REQUEST',
      '        AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]',
      '        KeySchema: [{ AttributeName: pk, KeyType: HASH }]',
      '        StreamSpecification: { StreamViewType: NEW_IMAGE }',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'audit.mjs'), 'export async function handler() {}\n');
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  // The table, as `tidewater start` creates it on the test run's DynamoDB Local.
  const endpoint = inject('dynamoEndpoint');
  expect(
    await main([
      'start',
      '--once',
      '-c',
      file,
      '--dynamodb-endpoint',
      endpoint,
      '--s3-endpoint',
      inject('s3Endpoint'),
    ]),
  ).toBe(EXIT.ok);
  await clients.dynamodb.send(
    new PutItemCommand({ TableName: `${name}-local-orders`, Item: { pk: { S: 'o-1' } } }),
  );

  // The endpoints `tidewater start` prints, as a user's shell would have them.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB_STREAMS', endpoint);
  const out = join(dir, 'orders.jsonl');
  expect(await main(['capture', '-c', file, '-o', out])).toBe(EXIT.ok);
  const records = (await readFile(out, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  expect(records.map((r) => [r.eventName, r.dynamodb.Keys.pk.S])).toEqual([['INSERT', 'o-1']]);

  // --table takes serverless.yml's logical id as well as a table name.
  const byId = join(dir, 'by-id.jsonl');
  expect(await main(['capture', '-c', file, '--table', 'Orders', '-o', byId])).toBe(EXIT.ok);
  expect(await readFile(byId, 'utf8')).toBe(await readFile(out, 'utf8'));
});
