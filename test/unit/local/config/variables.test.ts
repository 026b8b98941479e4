// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are serverless variables, not template literals
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InfraDefinitionError } from '../../../../src/local/config/errors.js';
import { planLocalResources } from '../../../../src/local/config/infra.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { planServiceResources } from '../../../../src/local/config/service-resources.js';
import {
  literalSource,
  resolveAsync,
  resolveSync,
  strToBool,
  VariableResolver,
} from '../../../../src/local/config/variables.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** A resolver over `document`, as if it were fixtures/serverless.yml; its errors are InfraDefinitionErrors. */
function resolver(document: Record<string, unknown>, env: Record<string, string> = {}) {
  return new VariableResolver({
    document,
    file: `${fixtures}serverless.yml`,
    options: { stage: 'test' },
    env,
    fail: (message) => new InfraDefinitionError('fixture', message),
  });
}

describe('shared serverless variable pieces', () => {
  it('strToBool is serverless v3: true/1 and false/0, trimmed, any case; anything else is invalid', () => {
    expect(['true', '1', ' TRUE ', "'True'", '"1"'].map(strToBool)).toEqual([true, true, true, true, true]);
    expect(['false', '0', 'FALSE', " '0' "].map(strToBool)).toEqual([false, false, false, false]);
    expect(['yes', 'no', '', 'truthy', '2'].map(strToBool)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('literal sources: quoted strings, numbers, booleans', () => {
    expect(literalSource("'a, b'")).toEqual({ value: 'a, b' });
    expect(literalSource('"x"')).toEqual({ value: 'x' });
    expect(literalSource('-1.5')).toEqual({ value: -1.5 });
    expect(literalSource('false')).toEqual({ value: false });
    expect(literalSource('env:X')).toBeUndefined();
  });

  it('infra/ (infra.ts) and serverless.yml (serverless-config.ts) read settings.yml alike', async () => {
    for (const input of ['TRUE', ' 0 ', 'false', '1']) {
      const env = { TIDEWATER_DELETION_PROTECTION: input };
      const planned = planLocalResources({ env }).settings.deletionProtection;
      const config = await loadServerlessConfig({ file: 'serverless.yml', env });
      expect(await config.get('custom.tidewater.deletionProtection')).toBe(planned);
      expect(planned).toBe(strToBool(input));
    }
    const env = { TIDEWATER_DELETION_PROTECTION: 'yes' };
    expect(() => planLocalResources({ env })).toThrow(
      /strToBool\(\) in .*TIDEWATER_DELETION_PROTECTION.*: expected true, false, 1 or 0, got a value of 3 characters/,
    );
    const config = await loadServerlessConfig({ file: 'serverless.yml', env });
    await expect(config.get('custom.tidewater.deletionProtection')).rejects.toThrow(
      /strToBool\(\) in .*TIDEWATER_DELETION_PROTECTION.*expected true, false, 1 or 0, got a value of 3/,
    );
  });
});

describe('the one variable resolver, run synchronously and asynchronously', () => {
  it("gives the same values either way: splices embedded variables, keeps a whole variable's type, falls back", async () => {
    // The characters that would end a variable or a quoted fallback are not text a variable holds.
    const text = fc.string({ minLength: 1 }).filter((v) => !/[${}'"]/.test(v));
    await fc.assert(
      fc.asyncProperty(text, fc.option(text, { nil: undefined }), async (value, fallback) => {
        const env = { X: value };
        const document = {
          embedded: 'a-${env:X}-b',
          whole: '${env:MISSING, 42}',
          fallback: fallback === undefined ? '${env:X}' : `\${env:MISSING, '${fallback}'}`,
        };
        const sync = resolveSync(resolver(document, env).get(''));
        expect(await resolveAsync(resolver(document, env).get(''))).toEqual(sync);
        expect(sync).toMatchObject({ embedded: `a-${value}-b`, whole: 42 });
        expect((sync as { fallback: string }).fallback).toBe(fallback === undefined ? value : fallback);
      }),
    );
  });

  it("leaves CloudFormation's ${AWS::Region} and ${Bucket.Arn} for Fn::Sub, as serverless v3 does", () => {
    const document = { sub: 'arn:${AWS::Partition}:s3:::${Bucket}/${sls:stage}/*' };
    expect(resolveSync(resolver(document).get('sub'))).toBe('arn:${AWS::Partition}:s3:::${Bucket}/test/*');
  });

  it('names a ${self:…} cycle instead of hanging on it', async () => {
    const document = { a: '${self:b}', b: 'x-${self:a}' };
    expect(() => resolveSync(resolver(document).get('a'))).toThrow(
      '${self:a} refers to itself: ${self:a} → ${self:b} → ${self:a}',
    );
    await expect(resolveAsync(resolver(document).get('a'))).rejects.toBeInstanceOf(InfraDefinitionError);
  });

  it('names a cycle through a file, and one that grows, by the variables as written', () => {
    const document = { a: '${file(./cycle.yml):x}', b: 'y${self:b2}', b2: '${file(./cycle.yml):grows}' };
    expect(() => resolveSync(resolver(document).get('a'))).toThrow(
      'variables in "${file(./cycle.yml):x}" form a cycle: ${file(./cycle.yml):x} → ${file(./cycle.yml):x}',
    );
    expect(() => resolveSync(resolver(document).get('b2'))).toThrow(
      'variables in "${file(./cycle.yml):grows}" nest too deeply: ${file(./cycle.yml):grows} → ${file(./cycle.yml):grows}',
    );
  });

  it('quotes no value from the environment in its errors, only the variables as written', async () => {
    const secret = 'hunter2-TOPSECRET';
    const document = {
      flag: '${strToBool(${env:MY_SECRET})}',
      embedded: 'x-${file(./${env:MY_SECRET}.yml)}',
      missing: '${env:NOPE}-${env:MY_SECRET}-${self:${env:MY_SECRET}}',
    };
    for (const path of Object.keys(document)) {
      const error = await resolveAsync(resolver(document, { MY_SECRET: secret }).get(path)).catch(
        (e: unknown) => e,
      );
      expect(error, path).toBeInstanceOf(InfraDefinitionError);
      expect((error as Error).message, path).not.toContain('hunter2');
      expect((error as Error).message, path).toContain('MY_SECRET');
    }
  });

  it('awaits a JS file that exports a promise; the synchronous run refuses it, naming the file', async () => {
    const document = { patterns: '${file(./patterns.cjs):deletes}' };
    expect(await resolveAsync(resolver(document).get('patterns'))).toEqual([{ eventName: ['REMOVE'] }]);
    expect(() => resolveSync(resolver(document).get('patterns'))).toThrow(
      /cannot load .*patterns\.cjs: it is a promise, and this reader cannot wait for one/,
    );
  });

  it("infra/ planned directly and through serverless.yml's resources: gives the same table, queues and names", async () => {
    for (const env of [
      {},
      { TIDEWATER_TTL_ATTRIBUTE: 'ttl', TIDEWATER_KMS_KEY_ARN: 'arn:aws:kms:us-east-1:1:key/k' },
    ]) {
      const direct = planLocalResources({ stage: 'ci', env });
      const config = await loadServerlessConfig({ file: 'serverless.yml', stage: 'ci', env });
      const viaServerless = await planServiceResources(config);
      expect(viaServerless.tables.map((t) => t.createTable)).toEqual([direct.table.createTable]);
      expect(viaServerless.tables[0]?.ttlAttribute).toBe(direct.table.ttlAttribute);
      expect(viaServerless.queues.map((q) => [q.queueName, q.attributes])).toEqual(
        direct.queues.map((q) => [q.queueName, q.attributes]),
      );
      for (const item of direct.notEmulated) expect(viaServerless.notEmulated).toContain(item);
    }
  });
});
