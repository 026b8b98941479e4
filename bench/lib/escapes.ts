/**
 * Collects what escapes the code under test while a soak runs — unhandled rejections and uncaught
 * exceptions in this process — so the soak reports them instead of dying on the first (or, with
 * a listener elsewhere, never noticing them).
 */
export function watchEscapes(): { errors: string[]; stop(): Promise<void> } {
  const errors: string[] = [];
  const record = (kind: string) => (error: unknown) =>
    errors.push(`${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  const onRejection = record('unhandledRejection');
  const onException = record('uncaughtException');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    errors,
    async stop() {
      // A rejection of the run's last requests surfaces after its microtasks: one macrotask more.
      await new Promise((resolve) => setImmediate(resolve));
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}
