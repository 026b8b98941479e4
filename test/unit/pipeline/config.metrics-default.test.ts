import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { processBatch } from '../../../src/pipeline/index.js';
import { metricsByDefault } from '../../../src/pipeline/metrics.js';
import { batch, silentLogger } from './fixtures.js';

describe('metrics left out of the config', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('are written in Lambda, not in tests or local runs; TIDEWATER_METRICS decides when set', () => {
    expect(metricsByDefault({})).toBe(false);
    expect(metricsByDefault({ AWS_LAMBDA_FUNCTION_NAME: 'archive' })).toBe(true);
    expect(metricsByDefault({ AWS_LAMBDA_FUNCTION_NAME: 'archive', TIDEWATER_METRICS: 'off' })).toBe(false);
    expect(metricsByDefault({ TIDEWATER_METRICS: 'on' })).toBe(true);
    expect(() => metricsByDefault({ TIDEWATER_METRICS: 'sometimes' })).toThrow(InvalidOptionsError);
    expect(() => metricsByDefault({ TIDEWATER_METRICS: 'sometimes' })).not.toThrow(/sometimes/);
  });

  it('print no EMF line on stdout outside Lambda, and one per invocation in it', async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', '');
    await processBatch(batch(2), { logger: silentLogger(), handlers: { insert: () => {} } });
    expect(written.filter((line) => line.includes('"_aws"'))).toEqual([]);
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'archive');
    await processBatch(batch(2), { logger: silentLogger(), handlers: { insert: () => {} } });
    expect(written.filter((line) => line.includes('"_aws"'))).toHaveLength(1);
  });
});
