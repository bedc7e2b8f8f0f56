// Relative links of the README and docs/*.md: every linked file exists, and every `#anchor` is a
// heading of the page it points into, spelled as GitHub spells heading anchors.
//
//   node --import tsx scripts/doc-links.ts    prints the broken links (none: prints nothing, exits 0)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** The Markdown pages the check covers: the README and every page under docs/. */
export function documentationPages(root = ROOT): string[] {
  const docs = join(root, 'docs');
  return [
    join(root, 'README.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(docs, name)),
  ];
}

/** The lines of a page with those inside fenced code blocks blanked: Markdown is what is left. */
function outsideFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && opener !== undefined) fence = opener;
    else if (fence !== undefined && opener !== undefined && line.trim().startsWith(fence)) fence = undefined;
    else if (fence === undefined) return line;
    return '';
  });
}

/**
 * GitHub's anchor for a heading: lower case, inline Markdown (code ticks, emphasis, link targets)
 * dropped, every character that is not a letter, a digit, a space, `-` or `_` removed, spaces as `-`;
 * a repeated heading gets `-1`, `-2`, … in order.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The relative links of a page: `[text](target)` and `[text](target#anchor)`, outside code. */
export function relativeLinks(markdown: string): string[] {
  const prose = outsideFences(markdown)
    .map((line) => line.replace(/(`+)[^`]*?\1/g, ''))
    .join('\n');
  return [...prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with the links of one page, one line per broken link (`page: target: why`). */
export function brokenLinks(page: string, markdown: string, root = ROOT): string[] {
  const problems: string[] = [];
  const name = relative(root, page);
  for (const target of relativeLinks(markdown)) {
    const [path = '', anchor] = target.split('#', 2);
    const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
    if (!existsSync(file)) {
      problems.push(`${name}: ${target}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(file).isDirectory() || !file.endsWith('.md')) {
      problems.push(`${name}: ${target}: an anchor into a file that is not Markdown`);
      continue;
    }
    const text = file === page ? markdown : readFileSync(file, 'utf8');
    if (!headingAnchors(text).has(decodeURIComponent(anchor)))
      problems.push(`${name}: ${target}: no heading with that anchor in ${relative(root, file)}`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = documentationPages().flatMap((page) => brokenLinks(page, readFileSync(page, 'utf8')));
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(1);
  }
}
