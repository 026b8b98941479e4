const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0']);

/**
 * Whether a streams client talks to a server on this machine (DynamoDB Local), judged from its
 * configured endpoint, else the SDK's endpoint variables (AWS_ENDPOINT_URL_DYNAMODB_STREAMS, then
 * AWS_ENDPOINT_URL). Anything else, including a wrapper whose endpoint cannot be seen, counts as
 * AWS: the cautious answer, since only DynamoDB Local's empty page reliably means "caught up".
 */
export async function isLocalEndpoint(
  streams: object,
  env: Record<string, string | undefined> = process.env,
): Promise<boolean> {
  const endpoint = (streams as { config?: { endpoint?: unknown } }).config?.endpoint;
  if (typeof endpoint === 'function') {
    const resolved = (await (endpoint as () => Promise<{ hostname?: string }>)()) ?? {};
    return isLocalHost(resolved.hostname);
  }
  const url = env.AWS_ENDPOINT_URL_DYNAMODB_STREAMS || env.AWS_ENDPOINT_URL;
  if (!url) return false;
  try {
    return isLocalHost(new URL(url).hostname);
  } catch {
    return false;
  }
}

function isLocalHost(hostname: string | undefined): boolean {
  if (!hostname) return false;
  const host = hostname.toLowerCase();
  return LOCAL_HOSTS.has(host) || host.startsWith('127.') || host.endsWith('.localhost');
}
