// Types of scripts/check-doc-links.js (plain JavaScript, run by node) for the tests that import it.

/** The markdown files whose links are checked (README.md, CHANGELOG.md, docs/*.md), relative to `root`. */
export function linkedFiles(root?: string): string[];
/** The anchors GitHub gives a markdown text's headings (and its explicit `<a id>` anchors). */
export function anchorsOf(markdown: string): Set<string>;
/** The links of a markdown text outside code, with their 1-based line. */
export function linksOf(markdown: string): { target: string; line: number }[];
/** Every broken relative link or anchor of `files`, as `file:line: why`. */
export function checkDocLinks(root?: string, files?: string[]): string[];
