import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** 1-minute load average when the run started: other work on the machine skews absolute numbers. */
  load: number;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
    load: Math.round((os.loadavg()[0] as number) * 100) / 100,
  };
}

/** Packages whose versions the results depend on. */
export const VERSIONED_PACKAGES = [
  '@aws-sdk/util-dynamodb',
  '@aws-lambda-powertools/batch',
  '@middy/core',
  '@middy/event-normalizer',
  'esbuild',
] as const;

/** Installed versions (from node_modules, not the ranges in package.json). */
export function packageVersions(root: string): Record<string, string> {
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const versions: Record<string, string> = { [own.name]: own.version };
  const require = createRequire(join(root, 'package.json'));
  for (const name of VERSIONED_PACKAGES) {
    try {
      const file = require.resolve(`${name}/package.json`);
      versions[name] = (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    } catch {
      // Some packages do not export package.json; read it from node_modules directly.
      try {
        const file = join(root, 'node_modules', name, 'package.json');
        versions[name] = (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
      } catch {
        versions[name] = 'not installed';
      }
    }
  }
  return versions;
}
