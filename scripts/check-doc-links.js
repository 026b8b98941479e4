#!/usr/bin/env node
// The docs' relative links, checked (issue 38, item 17): every link from README.md, CHANGELOG.md
// and docs/*.md to a file of this repository names a file that exists, and every `#anchor` names a
// heading of its target as GitHub renders it. External links (http:, mailto:) are not fetched:
// `npm test` runs offline. Run by `npm test` before vitest; `node scripts/check-doc-links.js`.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { docFiles } from './docs-snippets.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The markdown files whose links are checked, relative to `root`: the docs check's, and CHANGELOG.md. */
export function linkedFiles(root = repoRoot) {
  const [readme, ...docs] = docFiles(root);
  const changelog = existsSync(path.join(root, 'CHANGELOG.md')) ? ['CHANGELOG.md'] : [];
  return readme === 'README.md'
    ? [readme, ...changelog, ...docs]
    : [...changelog, ...(readme ? [readme] : []), ...docs];
}

/** Markdown's lines with its fenced code blocks blanked (a link there is not a link), line count kept. */
function prose(markdown) {
  const out = [];
  let fence;
  for (const line of markdown.split(/\r?\n/)) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (
      fence !== undefined &&
      marker !== undefined &&
      marker[0] === fence[0] &&
      marker.length >= fence.length
    )
      fence = undefined;
    else if (fence === undefined) {
      out.push(line);
      continue;
    }
    out.push('');
  }
  return out;
}

/**
 * The anchors GitHub gives a file's headings: the heading's text lowercased, punctuation other
 * than `-` and `_` dropped, spaces made `-`; a repeated slug gets `-1`, `-2`… Explicit
 * `<a id="…">` / `<a name="…">` anchors count too.
 */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const counts = new Map();
  for (const line of prose(markdown)) {
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const text = heading[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/`/g, '')
      .replace(/[*_~]{2,}/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const seen = counts.get(base) ?? 0;
    counts.set(base, seen + 1);
    anchors.add(seen === 0 ? base : `${base}-${seen}`);
  }
  return anchors;
}

/** Links of one markdown file: `[text](target)` and `[label]: target` definitions, with their line. */
export function linksOf(markdown) {
  const links = [];
  prose(markdown).forEach((text, index) => {
    const line = text.replace(/(`+)[^`]*?\1/g, ''); // nor is one in a code span
    for (const match of line.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ target: match[1], line: index + 1 });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/.exec(line);
    if (definition !== null) links.push({ target: definition[1], line: index + 1 });
  });
  return links;
}

/** Every broken relative link or anchor of `files` (relative to `root`), as `file:line: why`. */
export function checkDocLinks(root = repoRoot, files = linkedFiles(root)) {
  const problems = [];
  const anchorCache = new Map();
  const anchors = (file) => {
    let set = anchorCache.get(file);
    if (set === undefined) {
      set = anchorsOf(readFileSync(file, 'utf8'));
      anchorCache.set(file, set);
    }
    return set;
  };
  for (const file of files) {
    const absolute = path.join(root, file);
    for (const { target, line } of linksOf(readFileSync(absolute, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const resolved = pathPart === '' ? absolute : path.resolve(path.dirname(absolute), pathPart);
      const where = `${file}:${line}`;
      if (path.relative(root, resolved).startsWith('..')) {
        problems.push(`${where}: ${target} leaves the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        problems.push(`${where}: ${target}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
        problems.push(`${where}: ${target}: an anchor into a file that is not markdown`);
        continue;
      }
      if (!anchors(resolved).has(anchor))
        problems.push(`${where}: ${target}: ${path.relative(root, resolved)} has no heading #${anchor}`);
    }
  }
  return problems;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkDocLinks();
  if (problems.length > 0) {
    process.stderr.write(
      `docs links: ${problems.length} broken\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.exitCode = 1;
  } else
    process.stdout.write(`docs links: ${linkedFiles().length} files, every relative link and anchor found\n`);
}
