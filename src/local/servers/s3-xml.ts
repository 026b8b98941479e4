// The XML request bodies the local S3 server reads itself (DeleteObjects, CompleteMultipartUpload),
// so none reaches s3rver's fast-xml-parser 3 (published advisories, no fixed 3.x: docs/local.md).
// The two bodies are flat documents of known elements: this reader takes elements, attributes
// (ignored), text and the five named and numeric character references, and refuses everything
// else (DOCTYPE and entity declarations, comments, CDATA, processing instructions but the
// prolog). One pass over the text, depth bounded: linear time for any input.

/** An element: its local name (without a namespace prefix), its child elements, its text. */
export interface XmlElement {
  readonly name: string;
  readonly children: XmlElement[];
  text: string;
}

/** The deepest nesting the S3 bodies use is three (Delete > Object > Key); a little spare. */
const MAX_DEPTH = 8;

const NAMED: ReadonlyMap<string, string> = new Map([
  ['amp', '&'],
  ['lt', '<'],
  ['gt', '>'],
  ['quot', '"'],
  ['apos', "'"],
]);

const NAME = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;
const ATTRIBUTES = /^(?:\s+[A-Za-z_][A-Za-z0-9_.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*\s*$/;

/** The root element of `text`, or undefined when `text` is not a document this reader takes. */
export function readXml(text: string): XmlElement | undefined {
  let at = 0;
  const prolog = /^\uFEFF?\s*<\?xml\s[^?<>]*\?>/.exec(text);
  if (prolog) at = prolog[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (at < text.length) {
    const open = text.indexOf('<', at);
    const end = open < 0 ? text.length : open;
    if (end > at) {
      const chunk = decodeText(text.slice(at, end));
      if (chunk === undefined) return undefined;
      const parent = stack.at(-1);
      if (parent) parent.text += chunk;
      else if (chunk.trim() !== '') return undefined; // text outside the root element
    }
    if (open < 0) break;
    const close = text.indexOf('>', open);
    if (close < 0) return undefined;
    const tag = text.slice(open + 1, close);
    at = close + 1;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trimEnd();
      const element = stack.pop();
      if (element === undefined || element.name !== localName(name)) return undefined;
      if (stack.length === 0) root = element;
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const space = body.search(/\s/);
    const name = space < 0 ? body : body.slice(0, space);
    if (!NAME.test(name) || (space >= 0 && !ATTRIBUTES.test(body.slice(space)))) return undefined;
    if (root !== undefined || stack.length >= MAX_DEPTH) return undefined; // a second root, or too deep
    const element: XmlElement = { name: localName(name), children: [], text: '' };
    stack.at(-1)?.children.push(element);
    if (selfClosing) {
      if (stack.length === 0) root = element;
    } else stack.push(element);
  }
  return stack.length === 0 ? root : undefined;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

function decodeText(raw: string): string | undefined {
  let failed = false;
  const text = raw.replace(/&([^;&]{0,10});?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) {
      failed = true;
      return '';
    }
    const named = NAMED.get(ref);
    if (named !== undefined) return named;
    const match = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(ref);
    const code = match ? Number.parseInt(match[1] ?? match[2] ?? '', match[1] ? 16 : 10) : Number.NaN;
    if (!(code >= 1 && code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) {
      failed = true;
      return '';
    }
    return String.fromCodePoint(code);
  });
  return failed ? undefined : text;
}

/** The children of `element` named `name`. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((child) => child.name === name);
}

/** The text of the one child named `name`; undefined when there is none or more than one. */
export function childText(element: XmlElement, name: string): string | undefined {
  const found = childrenNamed(element, name);
  return found.length === 1 ? found[0]?.text : undefined;
}

/** Text as XML character data. */
export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );
}
