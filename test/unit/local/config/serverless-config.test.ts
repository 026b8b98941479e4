import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { toEmulatorOptions } from '../../../../src/local/config/stream-function.js';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('serverless.yml reader', () => {
  it('resolves self / opt / sls / env / file (YAML, JSON, CJS) / strToBool and reads the stream event', async () => {
    const config = await loadServerlessConfig({ file: fixture('serverless.yml'), env: {} });
    const [archive, shorthand, ...rest] = await config.streamFunctions();
    expect(rest).toEqual([]);
    expect(archive).toMatchObject({
      key: 'archive',
      functionName: 'fixture-dev-archive',
      handler: 'src/archive.handler',
      handlerModule: fixture('src/archive'),
      handlerExport: 'handler',
      timeoutSeconds: 30,
      environment: { SHARED: 'shared-dev', TABLE: 'fixture-dev-records', BUCKET: { Ref: 'Bucket' } },
      stream: {
        arn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
        enabled: true,
        startingPosition: 'LATEST',
        batchSize: 25,
        maximumBatchingWindowInSeconds: 2,
        reportBatchItemFailures: true,
        bisectBatchOnFunctionError: true,
        maximumRetryAttempts: 3,
        maximumRecordAgeInSeconds: 3600,
        parallelizationFactor: 2,
        onFailure: { arn: 'arn:aws:sqs:eu-west-1:111122223333:on-failure' },
        filterPatterns: [{ eventName: ['REMOVE'] }],
      },
    });
    expect(shorthand).toMatchObject({
      key: 'shorthand',
      functionName: 'custom-name',
      handlerExport: 'main',
      timeoutSeconds: 9,
      stream: { startingPosition: 'TRIM_HORIZON', reportBatchItemFailures: false },
    });
    expect(await config.get('provider.region')).toBe('eu-west-1');
  });

  it('lets options and the environment override, including inside nested variables', async () => {
    const config = await loadServerlessConfig({
      file: fixture('serverless.yml'),
      stage: 'prod',
      env: { FIXTURE_ROUTES: 'inserts', FIXTURE_BISECT: 'false', FIXTURE_REGION: 'ap-south-1' },
    });
    const archive = await config.streamFunction('archive');
    expect(archive?.functionName).toBe('fixture-prod-archive');
    expect(archive?.environment.TABLE).toBe('fixture-prod-records');
    expect(archive?.stream.bisectBatchOnFunctionError).toBe(false);
    expect(archive?.stream.filterPatterns).toEqual([
      { eventName: ['INSERT'], dynamodb: { Keys: { stage: ['prod'] } } },
    ]);
    expect(await config.get('provider.region')).toBe('ap-south-1');
    expect(await config.streamFunction('scheduled')).toBeUndefined();
  });

  it('turns the settings into emulator options the emulator accepts', async () => {
    const config = await loadServerlessConfig({ file: fixture('serverless.yml'), env: {} });
    const archive = await config.streamFunction('archive');
    const options = toEmulatorOptions(archive as NonNullable<typeof archive>);
    expect(options).toMatchObject({
      batchSize: 25,
      maximumBatchingWindowInSeconds: 2,
      parallelizationFactor: 2,
      timeoutSeconds: 30,
    });
    const emulator = new EventSourceMappingEmulator({ ...options, handler: async () => undefined });
    expect(emulator.functionArn).toMatch(/:function:fixture-dev-archive$/);
  });

  it('fails loudly on a typo in the stream event and on an unresolvable variable', async () => {
    const bad = await loadServerlessConfig({ file: fixture('bad-key.yml'), env: {} });
    await expect(bad.streamFunction('f')).rejects.toThrow(/unknown key\(s\) batchsize/);
    const unresolved = await loadServerlessConfig({ file: fixture('unresolved.yml'), env: {} });
    await expect(unresolved.streamFunction('f')).rejects.toMatchObject({ name: 'ServerlessConfigError' });
    await expect(unresolved.streamFunction('f')).rejects.toThrow(/\$\{env:FIXTURE_MISSING\}/);
    await expect(loadServerlessConfig({ file: fixture('missing.yml') })).rejects.toThrow(/cannot read/);
  });

  it('reads enabled / bisectBatchOnFunctionError as strToBool does, and names the setting a typo is in', async () => {
    const read = async (env: Record<string, string>) =>
      (await (await loadServerlessConfig({ file: fixture('booleans.yml'), env })).streamFunction('f'))
        ?.stream;
    expect(await read({})).toMatchObject({ enabled: true, bisectBatchOnFunctionError: false });
    expect(await read({ FIXTURE_ENABLED: ' FALSE ', FIXTURE_BISECT: '1' })).toMatchObject({
      enabled: false,
      bisectBatchOnFunctionError: true,
    });
    expect(await read({ FIXTURE_ENABLED: '0', FIXTURE_BISECT: 'True' })).toMatchObject({
      enabled: false,
      bisectBatchOnFunctionError: true,
    });
    // A typo must not silently turn the mapping off (or bisecting off): serverless v3 rejects it too.
    for (const [variable, setting, value] of [
      ['FIXTURE_ENABLED', 'enabled', 'ture'],
      ['FIXTURE_ENABLED', 'enabled', 'yes'],
      ['FIXTURE_BISECT', 'bisectBatchOnFunctionError', 'on'],
      ['FIXTURE_BISECT', 'bisectBatchOnFunctionError', '2'],
    ] as const) {
      const failure = read({ [variable]: value });
      await expect(failure).rejects.toMatchObject({ name: 'ServerlessConfigError' });
      await expect(failure).rejects.toThrow(
        `functions.f.events[].stream.${setting} must be true, false, 1 or 0, got ${JSON.stringify(value)}`,
      );
    }
  });

  it("reads the project's own serverless.yml", async () => {
    const config = await loadServerlessConfig({ file: 'serverless.yml', env: {} });
    const functions = await config.streamFunctions();
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      expect(fn.handlerExport).not.toBe('');
      expect(
        () => new EventSourceMappingEmulator({ ...toEmulatorOptions(fn), handler: async () => undefined }),
      ).not.toThrow();
    }
  });

  it('finds functions by event type and reads any function as Lambda runs it', async () => {
    const config = await loadServerlessConfig({ file: fixture('serverless.yml'), env: {} });
    expect(await config.functionsWithEvent('schedule')).toEqual(['scheduled']);
    expect(await config.functionsWithEvent('stream')).toEqual(['archive', 'shorthand']);
    expect(await config.functionSettings('scheduled')).toMatchObject({
      key: 'scheduled',
      functionName: 'fixture-dev-scheduled',
      handlerModule: fixture('src/cron'),
      handlerExport: 'handler',
      timeoutSeconds: 9,
      memorySize: 1024,
      environment: { SHARED: 'shared-dev' },
    });
    await expect(config.functionSettings('missing')).rejects.toThrow(
      /no function 'missing' under functions:/,
    );
  });
});
