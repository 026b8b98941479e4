import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { didYouMean } from '../../core/did-you-mean.js';
import { HandlerLoadError } from './errors.js';

/** The files a handler's module may be, in the order they are looked for. */
export const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs', '.cjs'] as const;

/** Running from compiled JavaScript (the built CLI), not from TypeScript under tsx or vitest. */
const RUNNING_BUILT = !import.meta.url.endsWith('.ts');

/** Where bundled TypeScript handlers are written, inside the service so its packages resolve. */
export const BUNDLE_DIR = '.tidewater';

/** Options of loadHandler: the project root, and whether to use its built copy. */
export interface LoadHandlerOptions {
  /**
   * The project root (where serverless.yml and package.json are). TypeScript is compiled with the
   * esbuild installed there, into `<root>/.tidewater/`; a built copy under `<root>/dist` is used
   * instead when it is at least as new as its source under `<root>/src`.
   */
  root: string;
  /**
   * Whether TypeScript must be compiled before it is imported; default: when this module itself
   * runs compiled (the CLI from dist/). False imports .ts as it is (under tsx or vitest).
   */
  built?: boolean;
}

/**
 * A handler's module file: `module` as given when it exists (it has an extension), else the first
 * of .ts, .mts, .js, .mjs, .cjs next to it. Relative paths are taken from `root`.
 */
export function resolveHandlerModule(module: string, root: string): string {
  const base = resolve(root, module);
  if (MODULE_EXTENSIONS.some((ext) => base.endsWith(ext)) && existsSync(base)) return base;
  for (const ext of MODULE_EXTENSIONS) if (existsSync(base + ext)) return base + ext;
  throw new HandlerLoadError(module, `no file ${base} with ${MODULE_EXTENSIONS.join(', ')}`);
}

/** `<root>/src/a/b.ts` → `<root>/dist/a/b.js` (.mts → .mjs); undefined outside `<root>/src`. */
export function builtPathOf(file: string, root: string): string | undefined {
  const fromSource = relative(join(resolve(root), 'src'), resolve(file));
  if (fromSource === '' || fromSource.startsWith('..') || isAbsolute(fromSource)) return undefined;
  return join(resolve(root), 'dist', fromSource.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs'));
}

/** The built copy of a TypeScript source, when there is one no older than the source. */
function currentBuiltCopy(source: string, root: string): string | undefined {
  const built = builtPathOf(source, root);
  if (built === undefined || !existsSync(built)) return undefined;
  return statSync(built).mtimeMs >= statSync(source).mtimeMs ? built : undefined;
}

/**
 * Imports a handler fresh (a unique URL per load, so each run reads its own environment) and
 * returns its named export. The one loader for `tidewater start`, `replay` and `demo`.
 *
 * TypeScript, when it must be compiled (the CLI runs from dist/): its current built copy under
 * `<root>/dist` if there is one, else the handler bundled with the service's own esbuild (the one
 * serverless-esbuild deploys with), its packages left as imports so they resolve from the service's
 * node_modules, as they would from the Lambda bundle's.
 */
export async function loadHandler<T = (...args: never[]) => unknown>(
  file: string,
  exportName: string,
  options: LoadHandlerOptions,
): Promise<T> {
  const root = resolve(options.root);
  const source = resolve(root, file);
  const name = `${file}#${exportName}`;
  const compile = (options.built ?? RUNNING_BUILT) && /\.m?ts$/.test(source);
  let path = source;
  let bundle: string | undefined;
  if (compile) {
    if (!existsSync(source)) throw new HandlerLoadError(name, `no file ${source}`);
    const built = currentBuiltCopy(source, root);
    if (built) path = built;
    else path = bundle = await bundleHandler(source, root, name);
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(`${pathToFileURL(path).href}?load=${randomUUID()}`)) as Record<string, unknown>;
  } catch (error) {
    throw new HandlerLoadError(name, `cannot import ${path}: ${(error as Error).message}`);
  } finally {
    // Imported (or failed): Node holds the module in memory, the file is no longer needed.
    if (bundle) await rm(bundle, { force: true });
  }
  const fn = module[exportName];
  if (typeof fn !== 'function') throw new HandlerLoadError(name, noSuchExport(path, module, exportName));
  return fn as T;
}

/** At most this many of a module's function exports are listed when the one asked for is not there. */
const LISTED_EXPORTS = 20;

/** "exports no function 'x'", with the functions it does export and the nearest of them. */
function noSuchExport(path: string, module: Record<string, unknown>, exportName: string): string {
  const functions = Object.keys(module).filter((key) => typeof module[key] === 'function');
  const listed =
    functions.length === 0
      ? 'it exports no function'
      : `its functions: ${functions.slice(0, LISTED_EXPORTS).join(', ')}${functions.length > LISTED_EXPORTS ? ', …' : ''}`;
  return `${path} exports no function '${exportName}' (${listed}).${didYouMean(exportName, functions)}`;
}

type Esbuild = typeof import('esbuild');

/** The service's own esbuild, resolved from its root as its build would resolve it. */
function serviceEsbuild(root: string, name: string, source: string): Esbuild {
  const require = createRequire(join(root, 'package.json'));
  try {
    return require('esbuild') as Esbuild;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new HandlerLoadError(
      name,
      `${relative(root, source)} is TypeScript, and tidewater compiles it with the esbuild of the ` +
        `service in ${root} (the one serverless-esbuild uses), which is not installed there. ` +
        'Run `npm install --save-dev esbuild` in that folder, or point the function at built JavaScript.',
    );
  }
}

/**
 * Bundles a TypeScript handler to `<root>/.tidewater/<name>-<id>.mjs`: ESM for this Node, a
 * source map inline (stack traces name the .ts lines), every package left as an import.
 */
async function bundleHandler(source: string, root: string, name: string): Promise<string> {
  const esbuild = serviceEsbuild(root, name, source);
  const outDir = join(root, BUNDLE_DIR, 'handlers');
  await mkdir(outDir, { recursive: true });
  const outfile = join(outDir, `${basename(source, extname(source))}-${randomUUID().slice(0, 8)}.mjs`);
  try {
    await esbuild.build({
      entryPoints: [source],
      outfile,
      absWorkingDir: root,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node.split('.')[0]}`,
      sourcemap: 'inline',
      logLevel: 'silent',
    });
  } catch (error) {
    await rm(outfile, { force: true });
    const errors = (
      error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }
    ).errors;
    const detail = errors?.length
      ? errors
          .map((e) => (e.location ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text))
          .join('; ')
      : (error as Error).message;
    throw new HandlerLoadError(name, `esbuild could not compile ${source}: ${detail}`);
  }
  return outfile;
}
