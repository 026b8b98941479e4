import { describe, expect, it } from 'vitest';
import { planLocalResources } from '../../../../src/local/config/infra.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { literalSource, strToBool } from '../../../../src/local/config/variables.js';

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

  it('infra/ (resources.ts) and serverless.yml (serverless-config.ts) read settings.yml alike', async () => {
    for (const input of ['TRUE', ' 0 ', 'false', '1']) {
      const env = { TIDEWATER_DELETION_PROTECTION: input };
      const planned = planLocalResources({ env }).settings.deletionProtection;
      const config = await loadServerlessConfig({ file: 'serverless.yml', env });
      expect(await config.get('custom.tidewater.deletionProtection')).toBe(planned);
      expect(planned).toBe(strToBool(input));
    }
    const env = { TIDEWATER_DELETION_PROTECTION: 'yes' };
    expect(() => planLocalResources({ env })).toThrow(/strToBool\(yes\): expected true, false, 1 or 0/);
    const config = await loadServerlessConfig({ file: 'serverless.yml', env });
    await expect(config.get('custom.tidewater.deletionProtection')).rejects.toThrow(
      /strToBool\(yes\).*expected true, false, 1 or 0/,
    );
  });
});
