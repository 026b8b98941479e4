import { TidewaterError } from '../records/index.js';

/** Java is missing or too old to run DynamoDB Local. The message names the fix. */
export class JavaMissingError extends Error {
  override readonly name = 'JavaMissingError';
  constructor(detail: string) {
    super(
      `DynamoDB Local needs Java 17 or newer on PATH (${detail}). ` +
        'Install it, e.g. `sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or ' +
        '`brew install openjdk@17` (macOS), then run again.',
    );
  }
}

/** A local server did not become ready in time. */
export class LocalServerStartError extends Error {
  override readonly name = 'LocalServerStartError';
  constructor(
    readonly server: string,
    detail: string,
  ) {
    super(`${server} did not start: ${detail}`);
  }
}

/** A checkpoint file belongs to another stream, or cannot be read. */
export class CheckpointError extends TidewaterError {
  override name = 'CheckpointError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`checkpoint ${file}: ${detail}`);
  }
}

/** A replay / capture file line that is neither a Lambda event nor a GetRecords record. */
export class ReplayFileError extends TidewaterError {
  override name = 'ReplayFileError';
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
    readonly sequenceNumber?: string,
  ) {
    super(`${file}:${line}: ${detail}`);
  }
}

/** serverless.yml cannot be read or a variable in it cannot be resolved. */
export class ServerlessConfigError extends TidewaterError {
  override name = 'ServerlessConfigError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

/** The handler timed out (the emulator's view of Lambda's `Task timed out`). */
export class HandlerTimeoutError extends TidewaterError {
  override name = 'HandlerTimeoutError';
  constructor(
    readonly timeoutMs: number,
    readonly firstSequenceNumber: string,
  ) {
    super(
      `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds (batch starting at ${firstSequenceNumber})`,
    );
  }
}

/** The emulator was stopped while a batch was still being retried. */
export class EmulatorStoppedError extends TidewaterError {
  override name = 'EmulatorStoppedError';
  constructor(readonly sequenceNumber: string | undefined) {
    super(`the emulator was stopped with records not yet processed (from ${sequenceNumber ?? 'none'})`);
  }
}

/** A handler module could not be found or loaded, or lacks the named export. */
export class HandlerLoadError extends TidewaterError {
  override name = 'HandlerLoadError';
  constructor(
    readonly handler: string,
    detail: string,
  ) {
    super(`handler ${handler}: ${detail}`);
  }
}
