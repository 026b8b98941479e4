/**
 * serverless.yml's `functions:` block with one function on a DynamoDB stream event (an ARN written
 * out, so no table needs to exist): the lines a CLI test's service folder declares its function with.
 */
export function streamFunctionLines(key: string, extra: readonly string[] = []): string[] {
  return [
    'functions:',
    `  ${key}:`,
    '    handler: handler.handler',
    '    events:',
    '      - stream:',
    '          arn: arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
    ...extra.map((line) => `          ${line}`),
  ];
}
