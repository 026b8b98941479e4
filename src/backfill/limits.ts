// The bounds an export's reader holds its input to. Each is derived from what DynamoDB writes, so a
// genuine export never meets one, and anything past one is refused in bounded time and memory.

/** DynamoDB's item size limit, in bytes (names and values, UTF-8). */
const MAX_ITEM_BYTES = 400 * 1024;

/**
 * Characters of DynamoDB JSON one byte of item size can take at most. The densest encodings are an
 * empty string or a NULL in a list (`{"S":""},` and `{"NULL":true},` for 1–2 bytes of size) and a
 * control character in a string (`\u0001`, 6 characters for 1 byte): 16 bounds them all.
 */
const CHARS_PER_ITEM_BYTE = 16;

/**
 * The longest line a data file may have: an incremental export's line holds two images (NewImage,
 * OldImage) of one item, its Keys and Metadata; 64 KiB covers the envelope and the keys.
 */
export const MAX_LINE_CHARS = 2 * MAX_ITEM_BYTES * CHARS_PER_ITEM_BYTE + 64 * 1024;

/**
 * Lambda's payload limit: an event source mapping's batch never carries more than 6 MB, so a
 * backfill's batch does not either (it is sent early) — memory holds one such batch.
 */
export const MAX_BATCH_CHARS = 6 * 1024 * 1024;

/**
 * How many times its compressed size a data file may inflate to. DynamoDB JSON compresses
 * 5–20 times; only items of one repeated character approach gzip's own limit (about 1032).
 */
export const DEFAULT_MAX_INFLATE_RATIO = 250;

/** Decompressed bytes read before the ratio is checked: a small file's ratio says nothing. */
export const INFLATE_RATIO_FLOOR_BYTES = 16 * 1024 * 1024;

/** manifest-summary.json is one small object. */
export const MAX_SUMMARY_BYTES = 1024 * 1024;

/** manifest-files.json: about 200 bytes a data file, so more than 300,000 files. */
export const MAX_MANIFEST_FILES_BYTES = 64 * 1024 * 1024;

/** Data files an export may list: the sequence numbers give a file's number six digits. */
export const MAX_DATA_FILES = 1_000_000;

/** S3's key length limit, in UTF-8 bytes. */
export const MAX_S3_KEY_BYTES = 1024;
