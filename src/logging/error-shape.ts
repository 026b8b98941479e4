/**
 * pino's error shape (`type`, `message` and `stack` with their causes appended, `aggregateErrors`,
 * the error's own enumerable fields), built here so that logging an error does not load pino:
 * the pipeline's default logger must stay free of it for cold start. Lines match what
 * pino's standard `err` serializer writes.
 */
interface ErrorLike {
  message: string;
  stack?: unknown;
  cause?: unknown;
  errors?: unknown;
  name?: unknown;
  constructor?: unknown;
}

function isErrorLike(value: unknown): value is ErrorLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** A function-valued cause is VError's style: called to get the cause. */
function causeOf(error: ErrorLike): ErrorLike | undefined {
  const cause = typeof error.cause === 'function' ? (error.cause as () => unknown)() : error.cause;
  return isErrorLike(cause) ? cause : undefined;
}

function stackWithCauses(error: ErrorLike, seen: Set<ErrorLike>): string {
  const stack = typeof error.stack === 'string' ? error.stack : '';
  if (seen.has(error)) return `${stack}\ncauses have become circular...`;
  const cause = causeOf(error);
  if (cause === undefined) return stack;
  seen.add(error);
  return `${stack}\ncaused by: ${stackWithCauses(cause, seen)}`;
}

function messageWithCauses(error: ErrorLike, seen: Set<ErrorLike>, skip: boolean): string {
  const message = skip ? '' : error.message;
  if (seen.has(error)) return `${message}: ...`;
  const cause = causeOf(error);
  if (cause === undefined) return message;
  seen.add(error);
  const vErrorStyle = typeof error.cause === 'function';
  return `${message}${vErrorStyle ? '' : ': '}${messageWithCauses(cause, seen, vErrorStyle)}`;
}

export function errorShape(error: Error): Record<string, unknown> {
  return shape(error as ErrorLike, new Set<ErrorLike>());
}

function shape(error: ErrorLike, inProgress: Set<ErrorLike>): Record<string, unknown> {
  inProgress.add(error);
  const out: Record<string, unknown> = {
    type: typeof error.constructor === 'function' ? error.constructor.name : error.name,
    message: messageWithCauses(error, new Set(), false),
    stack: stackWithCauses(error, new Set()),
  };
  if (Array.isArray(error.errors)) {
    out.aggregateErrors = error.errors.map((e: unknown) => (isErrorLike(e) ? shape(e, inProgress) : e));
  }
  for (const key in error) {
    if (out[key] !== undefined) continue;
    const value = (error as unknown as Record<string, unknown>)[key];
    if (!isErrorLike(value)) out[key] = value;
    // Causes are already folded into message and stack.
    else if (key !== 'cause' && !inProgress.has(value)) out[key] = shape(value, inProgress);
  }
  inProgress.delete(error);
  return out;
}
