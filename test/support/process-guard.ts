import { afterAll, afterEach } from 'vitest';

// A setupFiles entry: every test file runs it in its own worker. A rejection nobody handled or an
// exception nobody caught is a request or a callback that escaped the code under test (in Lambda
// it fails whichever invocation runs at that moment and restarts the runtime), so the test during
// which it surfaced fails, or the file's last hook when it surfaced after the last test.

const escaped: { kind: string; error: unknown }[] = [];
const onRejection = (error: unknown) => escaped.push({ kind: 'unhandledRejection', error });
const onException = (error: unknown) => escaped.push({ kind: 'uncaughtException', error });
process.on('unhandledRejection', onRejection);
process.on('uncaughtException', onException);

function failOnEscaped(): void {
  if (escaped.length === 0) return;
  const found = escaped.splice(0);
  const detail = found.map(({ kind, error }) => `${kind}: ${describe(error)}`).join('\n');
  throw new AggregateError(
    found.map((f) => f.error),
    `${found.length} process-level error(s) escaped during this test:\n${detail}`,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}

afterEach(failOnEscaped);
afterAll(async () => {
  // A rejection of the last test surfaces after its microtasks drain: give it one macrotask.
  await new Promise((resolve) => setImmediate(resolve));
  failOnEscaped();
});
