import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { createLambdaContext } from '../../../src/testing.js';

describe('createLambdaContext: every field has a default (issue 38, item 12)', () => {
  it('builds a context Lambda could have given from no options at all', () => {
    const context = createLambdaContext();
    expect(context.functionName).toBe('test-function');
    expect(context.invokedFunctionArn).toBe('arn:aws:lambda:us-east-1:123456789012:function:test-function');
    expect(context.memoryLimitInMB).toBe('128');
    expect(context.functionVersion).toBe('$LATEST');
    expect(context.logGroupName).toBe('/aws/lambda/test-function');
    expect(context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    // Lambda's default timeout is 3 s: the remaining time starts at or below it.
    const remaining = context.getRemainingTimeInMillis();
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(3000);
  });

  it('derives the ARN and log group from a given name, and keeps what is given', () => {
    const named = createLambdaContext({ functionName: 'orders' });
    expect(named.invokedFunctionArn).toBe('arn:aws:lambda:us-east-1:123456789012:function:orders');
    expect(named.logGroupName).toBe('/aws/lambda/orders');
    const given = createLambdaContext({
      functionName: 'orders',
      functionArn: 'arn:aws:lambda:eu-west-1:111122223333:function:orders',
      timeoutMs: 0,
      memoryLimitInMB: 1024,
      awsRequestId: 'req-1',
    });
    expect(given.invokedFunctionArn).toBe('arn:aws:lambda:eu-west-1:111122223333:function:orders');
    expect(given.memoryLimitInMB).toBe('1024');
    expect(given.awsRequestId).toBe('req-1');
    expect(given.getRemainingTimeInMillis()).toBe(0);
  });

  it.each([
    [{ memoryLimitInMB: 0 }, 'memoryLimitInMB'],
    [{ memoryLimitInMB: 1.5 }, 'memoryLimitInMB'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ functionName: '' }, 'functionName'],
    [{ functionArn: 42 }, 'functionArn'],
    [{ timeout: 3000 }, 'timeout'],
  ])('refuses %j naming the option', (options, option) => {
    expect(() => createLambdaContext(options as never)).toThrow(InvalidOptionsError);
    expect(() => createLambdaContext(options as never)).toThrow(`'${option}'`);
  });
});
