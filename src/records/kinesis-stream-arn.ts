import { kinesisArnStream } from './stream-arn-names.js';

/** A Kinesis stream's ARN as an option: `arn:aws:kinesis:<region>:<account>:stream/<name>`. */
export const KINESIS_STREAM_ARN_OPTION = {
  kind: 'custom',
  expected: 'a Kinesis stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>)',
  check: (value: unknown) =>
    typeof value === 'string' && /^arn:aws[\w-]*:kinesis:[^:]+:\d{12}:stream\/.+$/.test(value),
  required: true,
} as const;

/**
 * The stream's name, which calls to the local server pass as StreamName: kinesalite predates the
 * StreamARN parameter (2022), and Kinesis takes either.
 */
export function kinesisStreamName(arn: string): string {
  return kinesisArnStream(arn) ?? arn;
}

/** The region of a Kinesis stream ARN. */
export function kinesisStreamRegion(arn: string): string {
  return arn.split(':')[3] as string;
}
