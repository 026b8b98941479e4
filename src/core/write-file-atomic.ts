import { randomUUID } from 'node:crypto';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Read and write for the file's owner, nothing for anyone else. */
export const OWNER_ONLY = 0o600;

/**
 * Writes `path` whole or not at all: the data goes to a temporary file next to it, which is then
 * renamed into place, so a reader (or a crash) never sees half a file. The temporary file is
 * removed when the write fails. `flush` asks for the data on disk before the rename.
 *
 * The file is its owner's only (0600, or `mode`, whatever the umask): every caller writes item data (the
 * file sink, checkpoints) or where the local servers listen (`start --write-env`).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { flush?: boolean; mode?: number } = {},
): Promise<void> {
  const temp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    const mode = options.mode ?? OWNER_ONLY;
    await writeFile(temp, data, { flush: options.flush === true, mode });
    // The mode above is masked by the umask; chmod is not, and the rename keeps it.
    await chmod(temp, mode);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
