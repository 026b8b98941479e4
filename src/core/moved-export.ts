import { TidewaterError } from './errors.js';

/**
 * An export that moved to another entry point or was renamed, used. An ESM import of a name an
 * entry no longer has fails at link time with Node's message, which names no replacement; so a
 * moved name stays exported for one minor version as a value that throws this, naming the new home.
 */
export class MovedExportError extends TidewaterError {
  override name = 'MovedExportError';
  /** The old name and entry, `StreamEventBuilder from 'tidewater/local'`. */
  readonly was: string;
  /** What to import instead, `import { StreamEventBuilder } from 'tidewater/testing'`. */
  readonly replacement: string;
  constructor(was: string, replacement: string) {
    super(`${was} has moved: ${replacement} (the old name goes in the next minor version)`);
    this.was = was;
    this.replacement = replacement;
  }
}

/**
 * The value a moved export leaves behind. Calling it, constructing it or testing `instanceof`
 * against it throws MovedExportError: each is a use of the old name, and none can do what the
 * old value did without silently meaning something else.
 */
export interface MovedExport {
  (...args: readonly unknown[]): never;
  new (...args: readonly unknown[]): never;
}

/** `movedExport('StreamEventBuilder', 'tidewater/local', "import { StreamEventBuilder } from 'tidewater/testing'")`. */
export function movedExport(name: string, from: string, replacement: string): MovedExport {
  const fail = (): never => {
    throw new MovedExportError(`${name} from '${from}'`, replacement);
  };
  // A plain function is callable and constructible; Symbol.hasInstance makes `instanceof` fail too.
  const value = function moved(): never {
    return fail();
  };
  Object.defineProperty(value, 'name', { value: name });
  Object.defineProperty(value, Symbol.hasInstance, { value: fail });
  return value as unknown as MovedExport;
}
