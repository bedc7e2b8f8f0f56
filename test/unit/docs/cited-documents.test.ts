/**
 * A comment in src/ that cites a document cites one that is in the repository: every `docs/…` or
 * `….md` path a comment names exists, and a heading quoted after it ("Errors") is a heading of that
 * document. Documents kept outside the repository (the contract's "Spec 021") are not cited by name:
 * docs/contract.md summarises them.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..', '..');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (entry.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** The comments of a TypeScript text: block comments, and line comments (not a URL's `://`). */
function commentsOf(text: string): string[] {
  const blocks = [...text.matchAll(/\/\*[\s\S]*?\*\//g)].map((match) => match[0]);
  const lines = [...text.matchAll(/(?:^|[^:'"`\w])\/\/(?!\/)(.*)$/gm)].map((match) => match[1]!);
  return [...blocks, ...lines];
}

interface Citation {
  path: string;
  headings: string[];
}

/** Document paths a comment cites, each with the headings quoted right after it (`, "A" and "B"`). */
function citationsOf(comment: string): Citation[] {
  const text = comment.replace(/\s*\n\s*\*\s*/g, ' ');
  return [...text.matchAll(/\b((?:docs\/)?(?:[\w.-]+\/)*[\w-]+\.md|docs\/[\w./-]*\w)/g)].map((match) => {
    const after = /^,\s*((?:"[^"]+"(?:,\s*|\s+and\s+)?)+)/.exec(text.slice(match.index + match[0].length));
    const headings = after === null ? [] : [...after[1]!.matchAll(/"([^"]+)"/g)].map((quoted) => quoted[1]!);
    return { path: match[1]!, headings };
  });
}

/** What is wrong with one citation: a path not in the repository, or a heading not in the document. */
function citationProblems({ path, headings }: Citation, root: string): string[] {
  const file = join(root, path);
  if (!existsSync(file)) return [`${path} is not in the repository`];
  if (!path.endsWith('.md')) return [];
  const titles = [...readFileSync(file, 'utf8').matchAll(/^#+\s+(.*)$/gm)].map((match) => match[1]!);
  return headings
    .filter((heading) => !titles.some((title) => title.startsWith(heading)))
    .map((heading) => `${path} has no heading "${heading}"`);
}

const cited = sourceFiles(join(ROOT, 'src')).flatMap((file) =>
  commentsOf(readFileSync(file, 'utf8')).map((comment) => ({ file: relative(ROOT, file), comment })),
);

describe('documents cited by comments in src/', () => {
  test('every cited document and quoted heading exists in the repository', () => {
    const problems = cited.flatMap(({ file, comment }) =>
      citationsOf(comment).flatMap((citation) =>
        citationProblems(citation, ROOT).map((problem) => `${file}: ${problem}`),
      ),
    );
    assert.deepEqual(problems, []);
    // The scan finds the citations that are there (it is not vacuous).
    const paths = new Set(
      cited.flatMap(({ comment }) => citationsOf(comment).map((citation) => citation.path)),
    );
    assert.ok(paths.has('docs/contract.md') && paths.has('docs/workbook-profile.md'), [...paths].join(', '));
  });

  test('no comment cites a spec kept outside the repository by its number', () => {
    const outside = cited.filter(({ comment }) => /\bSpec\s+0\d\d\b/.test(comment)).map(({ file }) => file);
    assert.deepEqual(outside, []);
  });

  test('the check fails on a missing document, a missing heading and a bare file name', () => {
    const comment = [
      '/**',
      ' * See docs/contract.md, "Errors" and "Nowhere"; docs/gone.md; and workbook-profile.md.',
      ' */',
      '// docs/workbook-profile.md, "Input and errors": kept',
      "const url = 'dagu://x.md'; // a URL in code is not a comment",
    ].join('\n');
    const comments = commentsOf(comment);
    assert.equal(comments.length, 3);
    const problems = comments.flatMap((text) =>
      citationsOf(text).flatMap((citation) => citationProblems(citation, ROOT)),
    );
    assert.deepEqual(problems, [
      'docs/contract.md has no heading "Nowhere"',
      'docs/gone.md is not in the repository',
      'workbook-profile.md is not in the repository',
    ]);
  });
});
