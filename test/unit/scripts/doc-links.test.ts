import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import {
  brokenLinks,
  documentationPages,
  headingAnchors,
  relativeLinks,
} from '../../../scripts/doc-links.ts';
import { ROOT } from '../../support/bin.ts';

describe('relative links of the README and docs/*.md', () => {
  test('every linked file exists and every #anchor is a heading of its page', () => {
    const pages = documentationPages();
    assert.ok(pages.length > 10, pages.join(', '));
    const problems = pages.flatMap((page) => brokenLinks(page, readFileSync(page, 'utf8')));
    assert.deepEqual(problems, []);
  });

  test('every page under docs/ is one link away from the README', () => {
    const readme = join(ROOT, 'README.md');
    const linked = new Set(
      relativeLinks(readFileSync(readme, 'utf8')).map((target) => join(ROOT, target.split('#')[0]!)),
    );
    const unlinked = documentationPages()
      .filter((page) => page !== readme && !linked.has(page))
      .map((page) => relative(ROOT, page));
    assert.deepEqual(unlinked, []);
  });

  test('anchors are spelled as GitHub spells them (code, punctuation, repeats)', () => {
    const anchors = headingAnchors(
      [
        '# Dagu MCP Gateway',
        "## Dagu's own conformance tests (`npm run test:dagu-suite`)",
        '## OAuth: remote MCP hosts (scopes, audience, claims)',
        '## HTTPS',
        '```sh',
        '# not a heading',
        '```',
        '## HTTPS',
      ].join('\n'),
    );
    assert.deepEqual(
      [...anchors],
      [
        'dagu-mcp-gateway',
        'dagus-own-conformance-tests-npm-run-testdagu-suite',
        'oauth-remote-mcp-hosts-scopes-audience-claims',
        'https',
        'https-1',
      ],
    );
  });

  test('a missing file, a missing anchor and an anchor on another page are reported; code and URLs are not links', () => {
    const page = join(ROOT, 'README.md');
    const markdown = [
      '# Title',
      '[ok](#title) [gone](docs/gone.md) [bad anchor](#nowhere) [other page](docs/https.md#nowhere)',
      '[fine](docs/https.md) [web](https://example.com/#x) `[code](docs/gone.md)`',
      '```md',
      '[in a fence](docs/gone.md)',
      '```',
    ].join('\n');
    assert.deepEqual(relativeLinks(markdown), [
      '#title',
      'docs/gone.md',
      '#nowhere',
      'docs/https.md#nowhere',
      'docs/https.md',
    ]);
    assert.deepEqual(brokenLinks(page, markdown), [
      'README.md: docs/gone.md: no such file',
      'README.md: #nowhere: no heading with that anchor in README.md',
      'README.md: docs/https.md#nowhere: no heading with that anchor in docs/https.md',
    ]);
  });
});
