import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HandlerLoadError } from './errors.js';

const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs', '.cjs'] as const;

/** Running from compiled JavaScript (the built CLI), not from TypeScript under tsx or vitest. */
const RUNNING_BUILT = !import.meta.url.endsWith('.ts');

export interface LoadHandlerOptions {
  /**
   * The project root (where serverless.yml is). TypeScript under `<root>/src` is loaded from the
   * same path under `<root>/dist` when running built; other paths are never rewritten.
   */
  root: string;
  /** Load the built JavaScript for TypeScript sources; default: when this module itself runs built. */
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

/**
 * Imports a handler fresh (a unique URL per load, so each run reads its own environment) and
 * returns its named export. The one loader for `npm start` and `tidewater replay`.
 */
export async function loadHandler<T = (...args: never[]) => unknown>(
  file: string,
  exportName: string,
  options: LoadHandlerOptions,
): Promise<T> {
  let path = resolve(options.root, file);
  const built = options.built ?? RUNNING_BUILT;
  if (built && /\.m?ts$/.test(path)) {
    const js = builtPathOf(path, options.root);
    if (js === undefined)
      throw new HandlerLoadError(
        `${file}#${exportName}`,
        `${path} is TypeScript outside ${join(options.root, 'src')}: pass a .js handler, or run under tsx`,
      );
    if (!existsSync(js))
      throw new HandlerLoadError(
        `${file}#${exportName}`,
        `${path} is TypeScript and ${js} is not built: run \`npm run build\`, or pass a .js handler`,
      );
    path = js;
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(`${pathToFileURL(path).href}?load=${randomUUID()}`)) as Record<string, unknown>;
  } catch (error) {
    throw new HandlerLoadError(`${file}#${exportName}`, `cannot import ${path}: ${(error as Error).message}`);
  }
  const fn = module[exportName];
  if (typeof fn !== 'function')
    throw new HandlerLoadError(`${file}#${exportName}`, `${path} exports no function '${exportName}'`);
  return fn as T;
}
