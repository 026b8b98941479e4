/**
 * A handler reads its settings, and the SDK its endpoints, from process.env, as in Lambda. The
 * local runtime sets them for a run and puts the caller's environment back afterwards, so a CLI
 * command run in-process (tests, scripts) leaves nothing behind.
 */

/** Sets `values` on process.env (undefined removes a variable); returns what restores the previous values. */
export function overlayEnv(values: Readonly<Record<string, string | undefined>>): () => void {
  const saved = new Map<string, string | undefined>();
  for (const [name, value] of Object.entries(values)) {
    if (!saved.has(name)) saved.set(name, process.env[name]);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/** Environment variables through which the SDK and tools find local servers and credentials. */
export function isEndpointVariable(name: string): boolean {
  return name.startsWith('AWS_ENDPOINT_URL');
}
