import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { icLine, megamorphicSites } from '../../../bench/ic-log.ts';

// Lines as Node 20 and Node 24 write them with `--log-ic` (addresses shortened): a site that learns
// two shapes and then misses as megamorphic on three new maps, another that misses once, and the code
// they are in; the last code created over a pc names it.
const LOG = [
  'code-creation,JS,10,3706476,0x1000,256,old get file:///app/dist/dagu/client.js:1:1,0x34c2,~',
  'code-creation,JS,10,3706480,0x1000,128,get file:///app/dist/dagu/client.js:192:23,0x34c3,~',
  'code-creation,JS,10,3706490,0x2000,64,handle file:///app/dist/read/targets/runs.js:295:17,0x34c4,~',
  'LoadIC,0x1010,578114,194,47,0,1,0xa1,route,,',
  'LoadIC,0x1010,578115,194,47,1,P,0xa2,route,,',
  'LoadIC,0x1010,578116,194,47,P,N,0xa3,route,,',
  'LoadIC,0x1010,578117,194,47,N,N,0xa4,route,,',
  'LoadIC,0x1010,578118,194,47,N,N,0xa4,route,,',
  'KeyedLoadIC,0x2010,578119,297,21,P,N,0xb1,details,,',
  'LoadIC,0x9999,578120,1,1,N,N,0xc1,length,,',
  '',
].join('\n');

describe('megamorphicSites', () => {
  it('counts the misses of megamorphic sites and the maps they met, by site, most first', () => {
    const sites = megamorphicSites(LOG);
    assert.deepEqual(
      sites.map(({ code, line, column, kind, key, misses, maps }) => [
        code,
        line,
        column,
        kind,
        key,
        misses,
        maps,
      ]),
      [
        ['get file:///app/dist/dagu/client.js:192:23', 194, 47, 'LoadIC', 'route', 3, 2],
        ['handle file:///app/dist/read/targets/runs.js:295:17', 297, 21, 'KeyedLoadIC', 'details', 1, 1],
        ['?', 1, 1, 'LoadIC', 'length', 1, 1],
      ],
    );
  });

  it('counts only the lines from the offset on, naming their code from the lines before', () => {
    const from = LOG.indexOf('LoadIC,0x1010,578117');
    const sites = megamorphicSites(LOG, from);
    assert.equal(sites[0]!.code, 'get file:///app/dist/dagu/client.js:192:23');
    assert.equal(sites[0]!.misses, 2);
    assert.equal(sites[0]!.maps, 1);
    assert.deepEqual(megamorphicSites(LOG, LOG.length), []);
  });

  it('prints the misses per 1,000 calls and the sites that missed most, paths cut to the root', () => {
    assert.equal(
      icLine(megamorphicSites(LOG), 2000, '/app', 2),
      'megamorphic inline-cache misses per 1,000 calls 2.5, most: ' +
        '1.5 LoadIC .route at 194:47 in get dist/dagu/client.js:192:23 (2 maps); ' +
        '0.5 KeyedLoadIC .details at 297:21 in handle dist/read/targets/runs.js:295:17 (1 maps)',
    );
    assert.equal(icLine([], 2000, '/app'), 'megamorphic inline-cache misses per 1,000 calls 0.0');
  });
});
