// Where a pattern meets DynamoDB JSON in a stream record: the builder refuses non-string
// conditions there and lint warns about them, by the same rule.

/** Under these, a stream record's attributes are DynamoDB JSON: `{"N": "42"}`, never `{"N": 42}`. */
const IMAGE_KEYS = new Set(['Keys', 'NewImage', 'OldImage']);
/** Type keys whose value Lambda delivers as a JSON string, or an array of strings (sets). */
const STRING_TYPE_KEYS = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS']);

/** `dynamodb.<Keys|NewImage|OldImage>.<attribute>…<S|N|B|SS|NS|BS>`: a DynamoDB value that is text in the event. */
export function isStringTypedAttributePath(path: readonly string[]): boolean {
  return (
    path.length >= 4 &&
    path[0] === 'dynamodb' &&
    IMAGE_KEYS.has(path[1] as string) &&
    STRING_TYPE_KEYS.has(path[path.length - 1] as string)
  );
}
