import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server speaking the Lambda Invoke API (POST /2015-03-31/functions/<name>/invocations,
 * the event as the body, the function's result as the response; X-Amz-Function-Error: Unhandled
 * when it threw), on 127.0.0.1, so the real LambdaClient is exercised end to end.
 */
export async function startLambdaServer(functions: Record<string, (event: unknown) => Promise<unknown>>) {
  const invoked: { functionName: string; invocationType: string | undefined; event: unknown }[] = [];
  const server = createServer(async (request, response) => {
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(request.url ?? '');
    const functionName = decodeURIComponent(match?.[1] ?? '');
    const fn = functions[functionName];
    if (request.method !== 'POST' || fn === undefined) {
      response.writeHead(404, {
        'content-type': 'application/json',
        'x-amzn-errortype': 'ResourceNotFoundException',
      });
      response.end(JSON.stringify({ Type: 'User', message: `Function not found: ${functionName}` }));
      return;
    }
    const event = JSON.parse(await bodyOf(request));
    invoked.push({ functionName, invocationType: request.headers['x-amz-invocation-type'] as string, event });
    try {
      const result = await fn(event);
      response.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
      response.end(result === undefined ? 'null' : JSON.stringify(result));
    } catch (error) {
      response.writeHead(200, { 'content-type': 'application/json', 'x-amz-function-error': 'Unhandled' });
      response.end(JSON.stringify({ errorType: 'Error', errorMessage: String((error as Error).message) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    invoked,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
