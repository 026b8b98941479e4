import { TidewaterError } from '../../core/index.js';

/** Java is missing or too old to run DynamoDB Local. The message names the fix. */
export class JavaMissingError extends TidewaterError {
  override name = 'JavaMissingError';
  constructor(detail: string) {
    super(
      `DynamoDB Local needs a Java 17 (or newer) runtime on PATH (${detail}); a JRE is enough. ` +
        'Install one, e.g. `sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or ' +
        '`brew install openjdk@17` (macOS), then run again.',
    );
  }
}

/** A local server did not become ready in time. */
export class LocalServerStartError extends TidewaterError {
  override name = 'LocalServerStartError';
  constructor(
    readonly server: string,
    detail: string,
  ) {
    super(`${server} did not start: ${detail}`);
  }
}

/**
 * A RestoreObject request body the local S3 server does not take: `code` is S3's answer to it,
 * MalformedXML (not a RestoreRequest document of known elements, Days missing or not a positive
 * whole number, an unknown tier) or NotImplemented (an S3 Select restore, which S3 no longer offers).
 */
export class RestoreRequestError extends TidewaterError {
  override name = 'RestoreRequestError';
  constructor(
    readonly code: 'MalformedXML' | 'NotImplemented',
    detail: string,
  ) {
    super(`RestoreObject request body: ${detail}`);
  }
}
