// RestoreObject's request body (POST /<bucket>/<key>?restore), read by the local S3 server itself:
// s3rver has no RestoreObject. The body arrives through readBoundedBody (a small bound: the
// document has three short elements) and is parsed by the strict reader of s3-xml.ts; only the
// elements of an archive restore are taken, each once.
import { RestoreRequestError } from './errors.js';
import { childrenNamed, readXml, type XmlElement } from './s3-xml.js';

/** The retrieval tiers of S3's RestoreRequest (GlacierJobParameters.Tier). */
export const RESTORE_TIERS = ['Standard', 'Bulk', 'Expedited'] as const;
export type RestoreTier = (typeof RESTORE_TIERS)[number];

/** A RestoreRequest is three short elements; 16 KiB leaves room for a Description and whitespace. */
export const MAX_RESTORE_BODY_BYTES = 16 * 1024;

/** What an archive restore asks for. */
export interface RestoreRequest {
  /** How many days the restored copy stays readable. */
  days: number;
  tier: RestoreTier;
}

/** The largest Days taken: its days in milliseconds stay well inside a Date. */
const MAX_DAYS = 1_000_000;
const TAKEN = new Set(['Days', 'GlacierJobParameters', 'Tier', 'Description']);
const SELECT = new Set(['Type', 'SelectParameters', 'OutputLocation']);

function malformed(detail: string): RestoreRequestError {
  return new RestoreRequestError('MalformedXML', detail);
}

/** The text of at most one child named `name`; an error when there are more. */
function single(element: XmlElement, name: string): string | undefined {
  const found = childrenNamed(element, name);
  if (found.length > 1) throw malformed(`more than one ${name}`);
  return found[0]?.text.trim();
}

function tierOf(text: string | undefined): RestoreTier | undefined {
  if (text === undefined) return undefined;
  if (!(RESTORE_TIERS as readonly string[]).includes(text))
    throw malformed(`Tier must be one of ${RESTORE_TIERS.join(', ')}`);
  return text as RestoreTier;
}

/** The restore `text` asks for; a RestoreRequestError naming S3's answer otherwise. */
export function parseRestoreRequest(text: string): RestoreRequest {
  if (text.length > MAX_RESTORE_BODY_BYTES) throw malformed('longer than the bound');
  const root = readXml(text);
  if (root?.name !== 'RestoreRequest') throw malformed('not a RestoreRequest document');
  for (const child of root.children) {
    if (SELECT.has(child.name))
      throw new RestoreRequestError('NotImplemented', 'S3 Select restores are not served');
    if (!TAKEN.has(child.name)) throw malformed('an element RestoreRequest does not have');
    if (child.name !== 'GlacierJobParameters' && child.children.length > 0)
      throw malformed(`${child.name} holds elements`);
  }
  const daysText = single(root, 'Days');
  if (daysText === undefined || !/^[1-9][0-9]{0,6}$/.test(daysText) || Number(daysText) > MAX_DAYS)
    throw malformed(`Days must be a whole number from 1 to ${MAX_DAYS}`);
  const job = childrenNamed(root, 'GlacierJobParameters');
  if (job.length > 1) throw malformed('more than one GlacierJobParameters');
  const parameters = job[0];
  if (parameters?.children.some((c) => c.name !== 'Tier' || c.children.length > 0))
    throw malformed('GlacierJobParameters holds only a Tier');
  const tier =
    tierOf(parameters === undefined ? undefined : single(parameters, 'Tier')) ??
    tierOf(single(root, 'Tier')) ??
    'Standard';
  single(root, 'Description');
  return { days: Number(daysText), tier };
}
