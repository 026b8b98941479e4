// Types of scripts/package.js (plain JavaScript, run by node) for the tests that import it.

/** One entry of a zip's central directory. */
export interface ZipEntry {
  name: string;
  /** Uncompressed bytes. */
  size: number;
  compressedSize: number;
  /** 0 stored, 8 deflated; zipEntryData reads no other. */
  method: number;
  localHeaderOffset: number;
}

export interface BundleSize {
  zipBytes: number;
  codeBytes: number;
  sourceMapBytes: number;
  entries: string[];
}

export class ZipFormatError extends Error {
  override name: 'ZipFormatError';
}

export function offlineEnv(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export function zipEntries(buffer: Buffer): ZipEntry[];
export function zipEntryData(buffer: Buffer, entry: ZipEntry): Buffer;
export function bundleSizes(dir?: string): Record<string, BundleSize>;
/** One message per settings problem found in a packaged CloudFormation template. */
export function templateProblems(template: unknown): string[];
