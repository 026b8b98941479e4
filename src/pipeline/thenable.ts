/**
 * Whether a value returned by user code (a sink, handler or schema) is to be awaited: anything
 * with a callable `then`, as `await` itself decides, a function included.
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
