// What a handler bundle links, for the tests of the opt-in stages (kinesisSource(), validated()).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const entry = path.join(root, 'src/index.ts').replaceAll('\\', '/');

/** The src/ modules a handler links, bundled with examples/orders-service/build.mjs's options (the README's recipe). */
export async function linkedModules(source: string): Promise<string[]> {
  const recipe = pathToFileURL(path.join(root, 'examples/orders-service/build.mjs')).href;
  const { lambdaBuildOptions } = (await import(recipe)) as { lambdaBuildOptions: BuildOptions };
  const result = await build({
    ...lambdaBuildOptions,
    stdin: { contents: source, resolveDir: root, loader: 'ts' },
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return Object.entries(output.inputs)
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([file]) => file)
    .filter((file) => file.startsWith('src/'));
}
