import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { MODULE_EXTENSIONS } from '../emulator/handler-loader.js';

/**
 * A path an app's file names (a cdk.out's templateFile or asset path, a SAM CodeUri, a handler)
 * resolved against `root`, refused when it leaves `root`: by `..`, by being absolute elsewhere, or
 * through a symbolic link whose target is elsewhere. A template is input, and what it names is
 * read or run; it must not reach the rest of the machine. A relative path is taken from `from`
 * (default `root`: a stage's templateFile is relative to the stage's folder, bounded by the whole
 * cdk.out). `fail` gets the reason and returns the reader's own error, which names the property
 * and the file.
 */
export function resolveInside(
  root: string,
  path: string,
  fail: (detail: string) => Error,
  from: string = root,
): string {
  // A NUL makes every fs call throw a raw TypeError; it is never part of a real path.
  if (path.includes('\0')) throw fail('contains a NUL character');
  const base = resolve(root);
  const target = resolve(from, path);
  if (!within(base, target)) throw fail(`${JSON.stringify(path)} leads outside ${base}`);
  // The lexical check passed; now the file system's view, links followed, of the part that exists.
  const realBase = existsSync(base) ? realpathSync(base) : base;
  const realTarget = realExisting(target);
  if (!within(realBase, realTarget))
    throw fail(`${JSON.stringify(path)} leads outside ${base} through a symbolic link (to ${realTarget})`);
  return target;
}

function within(base: string, target: string): boolean {
  const rel = relative(base, target);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** `path` with its longest existing ancestor (itself, when it exists) replaced by its real path. */
function realExisting(path: string): string {
  let existing = path;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = dirname(existing);
    if (parent === existing) return path;
    rest.unshift(existing.slice(parent.length).replace(/^[\\/]/, ''));
    existing = parent;
  }
  return join(realpathSync(existing), ...rest);
}

/**
 * The project a config file belongs to: the nearest folder from `dir` up that holds a
 * package.json (a service's handlers and shared code live in its package), else `dir` itself.
 * serverless.yml's handlers and a SAM template's CodeUri must stay inside it.
 */
export function projectRoot(dir: string): string {
  for (let current = resolve(dir); ; ) {
    if (existsSync(join(current, 'package.json'))) return current;
    const parent = dirname(current);
    if (parent === current) return resolve(dir);
    current = parent;
  }
}

/**
 * A handler's module path (no extension) resolved inside `root` as resolveInside does, and each
 * file it may be (`<module>.ts`, `.js`…) that exists checked too: a link `index.js` inside the
 * folder may point anywhere.
 */
export function resolveModuleInside(
  root: string,
  module: string,
  fail: (detail: string) => Error,
  from: string = root,
): string {
  const path = resolveInside(root, module, fail, from);
  for (const ext of MODULE_EXTENSIONS) if (existsSync(path + ext)) resolveInside(root, path + ext, fail);
  return path;
}
