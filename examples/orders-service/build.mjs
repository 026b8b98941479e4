// The Lambda bundle, as tidewater's README recipe gives it: platform node, target node22, ESM,
// the AWS SDK left to the runtime (nodejs22.x ships SDK v3). serverless-esbuild takes the same
// settings under custom.esbuild in serverless.yml.
import { build } from 'esbuild';

/** @type {import('esbuild').BuildOptions} */
export const lambdaBuildOptions = {
  bundle: true,
  minify: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  external: ['@aws-sdk/*'],
  logLevel: 'warning',
};

/**
 * Bundles one handler to `outfile` (`.mjs`, so Lambda loads it as ESM).
 * @param {string} entry
 * @param {string} outfile
 * @returns {Promise<import('esbuild').Metafile>} what went into the bundle
 */
export async function bundleHandler(entry, outfile) {
  const result = await build({ ...lambdaBuildOptions, entryPoints: [entry], outfile, metafile: true });
  return result.metafile;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await bundleHandler('src/handlers/archive.ts', 'dist/archive.mjs');
}
