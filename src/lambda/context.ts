import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export interface FakeContextOptions {
  functionName: string;
  functionArn: string;
  timeoutMs: number;
  memoryLimitInMB: number;
  awsRequestId?: string;
}

/** The ARN Lambda gives a function (unqualified: no version or alias). */
export function lambdaFunctionArn(region: string, accountId: string, functionName: string): string {
  return `arn:aws:lambda:${region}:${accountId}:function:${functionName}`;
}

/** A Lambda Context whose remaining time counts down from the function's timeout, as in Lambda. */
export function createLambdaContext(options: FakeContextOptions): Context {
  const deadline = performance.now() + options.timeoutMs;
  const noop = () => undefined;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: options.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: options.functionArn,
    memoryLimitInMB: String(options.memoryLimitInMB),
    awsRequestId: options.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${options.functionName}`,
    logStreamName: `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(deadline - performance.now())),
    done: noop,
    fail: noop,
    succeed: noop,
  };
}
