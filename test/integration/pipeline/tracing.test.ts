// Powertools Tracer with a pipeline, as in Lambda: X-Ray's Lambda mode (LAMBDA_TASK_ROOT, a trace
// header) sending to a UDP "daemon" on loopback that this test runs and reads.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

interface XraySubsegment {
  name: string;
  id?: string;
  parent_id?: string;
  annotations?: Record<string, unknown>;
  fault?: boolean;
  error?: boolean;
  subsegments?: XraySubsegment[];
}

let daemon: Socket;
const received: XraySubsegment[] = [];

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (message) => {
    // "{"format":"json","version":1}\n{…document…}"
    const document = message.toString('utf8').split('\n')[1];
    if (document) received.push(JSON.parse(document) as XraySubsegment);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  const { port } = daemon.address();
  // X-Ray and the Tracer read these when they load: set them first, import after.
  vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${port}`);
  vi.stubEnv('LAMBDA_TASK_ROOT', '/var/task');
  vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
  vi.stubEnv('AWS_XRAY_CONTEXT_MISSING', 'IGNORE_ERROR');
  vi.stubEnv(
    '_X_AMZN_TRACE_ID',
    'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
  );
  vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'orders');
  vi.stubEnv('_HANDLER', 'index.handler');
});

afterAll(() => {
  daemon.close();
  vi.unstubAllEnvs();
});

/** Everything X-Ray sent, subsegments nested in what arrived included. */
function flatten(documents: readonly XraySubsegment[]): XraySubsegment[] {
  return documents.flatMap((d) => [d, ...flatten(d.subsegments ?? [])]);
}

async function until(check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check() && Date.now() < deadline; )
    await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('a traced stream handler', () => {
  it('puts each sink write in a subsegment with the sink, its record count and its failures', async () => {
    const { Tracer } = await import('@aws-lambda-powertools/tracer');
    const { captureLambdaHandler } = await import('@aws-lambda-powertools/tracer/middleware');
    const { createStreamHandler, sinkTracer } = await import('../../../src/pipeline/index.js');
    const { MemorySink } = await import('../../../src/sinks/memory-sink.js');
    const { batch, silentLogger } = await import('../../unit/pipeline/fixtures.js');
    const { createLambdaContext } = await import('../../../src/testing.js');

    const tracer = new Tracer({ serviceName: 'orders' });
    expect(tracer.isTracingEnabled()).toBe(true);
    const archive = new MemorySink({ name: 'archive' });
    const audit = new MemorySink({ name: 'audit', failWhen: (_record, delivery) => delivery === 1 });
    const handler = createStreamHandler({
      routes: [
        { when: 'insert', to: archive },
        { when: 'insert', to: audit },
      ],
      tracer: sinkTracer(tracer),
      logger: silentLogger(),
      metrics: false,
      retry: { attempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    }).use(captureLambdaHandler(tracer));

    const response = await handler(
      batch(3) as never,
      createLambdaContext({
        functionName: 'orders',
        functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:orders',
        memoryLimitInMB: 1024,
        timeoutMs: 30_000,
      }),
    );
    expect(response).toEqual({ batchItemFailures: [] });
    await until(() =>
      flatten(received).some((s) => s.name === '## sink audit' && s.annotations?.failed === 0),
    );

    const sinkWrites = flatten(received)
      .filter((s) => s.name.startsWith('## sink '))
      .map((s) => [s.name, s.annotations]);
    expect(sinkWrites).toEqual(
      expect.arrayContaining([
        ['## sink archive', { sink: 'archive', records: 3, failed: 0 }],
        ['## sink audit', { sink: 'audit', records: 3, failed: 3 }],
        ['## sink audit', { sink: 'audit', records: 3, failed: 0 }],
      ]),
    );
    // Inside the handler's subsegment (captureLambdaHandler's), as the SDK clients' calls are.
    const handlerSegment = received.find((s) => s.name === '## index.handler');
    expect(handlerSegment?.id).toBeDefined();
    for (const write of received.filter((s) => s.name.startsWith('## sink ')))
      expect(write.parent_id).toBe(handlerSegment?.id);
  });
});
