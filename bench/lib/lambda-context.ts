/** A Lambda context good enough for handlers that read the deadline and request id. */
export function benchContext(requestId = 'bench-request'): Record<string, unknown> {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'bench',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bench',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/bench',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => 300_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
