// What a stream ARN written out names. The local servers' resources have other accounts, regions
// and labels than the deployment an ARN was written for: they match it by the name in it only.

/** The table of a DynamoDB stream ARN (`…:table/<name>/stream/<label>`); undefined for other text. */
export function streamArnTable(arn: string): string | undefined {
  return /:table\/([^/]+)\/stream\//.exec(arn)?.[1];
}

/** The stream of a Kinesis stream ARN (`…:stream/<name>`); undefined for other text. */
export function kinesisArnStream(arn: string): string | undefined {
  const at = arn.indexOf(':stream/');
  return at < 0 ? undefined : arn.slice(at + ':stream/'.length);
}
