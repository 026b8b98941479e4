import { readFileSync } from 'node:fs';

const LISTEN = '0A';
const LOOPBACK = new Set([
  '0100007F', // 127.0.0.1
  '00000000000000000000000001000000', // ::1
  '0000000000000000FFFF00000100007F', // ::ffff:127.0.0.1
]);

/**
 * The local addresses (as /proc/net/tcp{,6} spells them, hex) of the sockets listening on `port`.
 * Linux only: these machines are; the kernel's table, unlike `ss`, needs no package.
 */
export function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === LISTEN && fields[1]?.endsWith(`:${hexPort}`))
      .map((fields) => (fields[1] as string).split(':')[0] as string),
  );
}

/** True when something listens on `port` and only on a loopback address. */
export function listensOnLoopbackOnly(port: number): boolean {
  const addresses = listeningAddresses(port);
  return addresses.length > 0 && addresses.every((address) => LOOPBACK.has(address));
}
