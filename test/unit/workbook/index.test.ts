/**
 * The reader as the read service calls it: path rules and WORKBOOK_ROOTS in this thread, the read
 * itself in a worker thread (started from the .ts sources under tsx, and from a compiled build),
 * with the concurrency cap, the deadline, the heap limit and abort.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type GatewayConfig, loadConfig } from '../../../src/config.ts';
import { createWorkbookReader, type WorkbookReader } from '../../../src/workbook/index.ts';
import { WorkerPool } from '../../../src/workbook/pool.ts';
import { assertWorkbookError, type ExpectedWorkbookError } from '../../support/workbook-errors.ts';
import { fixtureDir, writeLongSheet, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';
import { put, rawXlsx } from '../../support/workbook-fixtures-zip.ts';

const DEFAULTS: GatewayConfig['workbook'] = loadConfig({}).workbook;
const ROOT = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));

let dir: string;
let cleanup: () => Promise<void>;
let small: string;
let long: string;
const readers: WorkbookReader[] = [];

/** A reader with the fixture folder as its root, unless `options` say otherwise. */
function reader(options: Partial<GatewayConfig['workbook']> = {}): WorkbookReader {
  const created = createWorkbookReader({ ...DEFAULTS, roots: [dir], ...options });
  readers.push(created);
  return created;
}

async function expectError(promise: Promise<unknown>, expected: ExpectedWorkbookError): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assertWorkbookError(error, expected);
    return true;
  });
}

before(async () => {
  ({ dir, cleanup } = await fixtureDir('api'));
  dir = await realpath(dir);
  small = await writeSmallWorkbook(path.join(dir, 'small.xlsx'));
  long = await writeLongSheet(path.join(dir, 'long.xlsx'), 7000);
});
after(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await cleanup();
});

describe('createWorkbookReader', () => {
  it('profiles a workbook in a worker started from the TypeScript sources', async () => {
    const model = await reader().read(small, undefined);
    assert.equal(model.path, small);
    assert.equal(model.date_system, '1900');
    assert.deepEqual(model.sheets[0]?.sample, [
      { _row: 2, city: 'Oslo', count: 3 },
      { _row: 3, city: 'Lima', count: 5 },
    ]);
  });

  it('carries headers named __proto__, constructor and _row through the worker as plain keys', async () => {
    const file = await put(
      path.join(dir, 'proto.xlsx'),
      rawXlsx({
        sharedStrings: ['__proto__', 'constructor', '_row'],
        sheets: [
          {
            name: 'P',
            rows:
              '<row r="1"><c t="s"><v>0</v></c><c t="s"><v>1</v></c><c t="s"><v>2</v></c></row>' +
              '<row r="2"><c t="inlineStr"><is><t>a</t></is></c><c><v>5</v></c><c><v>7</v></c></row>',
          },
        ],
      }),
    );
    const model = await reader().read(file, undefined);
    const sheet = model.sheets[0]!;
    assert.deepEqual(sheet.headers, ['__proto__', 'constructor', '_row_2']);
    assert.equal(
      JSON.stringify(sheet.types),
      '{"__proto__":"string","constructor":"integer","_row_2":"integer"}',
    );
    assert.equal(JSON.stringify(sheet.sample), '[{"_row":2,"__proto__":"a","constructor":5,"_row_2":7}]');
    assert.deepEqual(model.warnings, ['P!C1: duplicate header "_row"; column named _row_2']);
  });

  it('accepts .XLSX and .xlsm in any case, refuses other extensions on path', async () => {
    const upper = await put(
      path.join(dir, 'UPPER.XLSX'),
      await import('node:fs/promises').then((fs) => fs.readFile(small)),
    );
    assert.equal((await reader().read(upper, undefined)).sheets.length, 1);
    for (const name of ['data.csv', 'data.xls', 'data', 'data.xlsx.bak']) {
      await expectError(reader().read(path.join(dir, name), undefined), {
        code: 'invalid_tool_input',
        message: `${name}: only .xlsx and .xlsm workbooks are supported; save as .xlsx`,
        field: 'path',
      });
    }
  });

  it('reports a missing file and a directory', async () => {
    await expectError(reader().read(path.join(dir, 'missing.xlsx'), undefined), {
      code: 'resource_not_found',
      message: 'missing.xlsx: workbook not found',
    });
    await mkdir(path.join(dir, 'folder.xlsx'));
    await expectError(reader().read(path.join(dir, 'folder.xlsx'), undefined), {
      code: 'invalid_tool_input',
      message: 'folder.xlsx: path is a directory, not a workbook',
      field: 'path',
    });
  });

  it('refuses a file over the size cap before starting a worker', async () => {
    await expectError(reader({ maxFileBytes: 100 }).read(small, undefined), {
      code: 'resource_unavailable',
      message: /^small\.xlsx: workbook exceeds processing limits \(file is \d+ bytes, more than 100\)$/,
    });
  });
});

describe('WORKBOOK_ROOTS', () => {
  it('unset, reads nothing: every path is unauthorized, naming the setting', async () => {
    const closed = reader({ roots: undefined });
    for (const input of [small, 'small.xlsx', path.join(dir, 'missing.xlsx'), 'notes.txt']) {
      await expectError(closed.read(input, undefined), {
        code: 'unauthorized',
        message:
          'Workbook reads are off on this gateway: the operator has opened no folder. Set WORKBOOK_ROOTS to the folders agents may read.',
      });
    }
  });

  it('a relative path names a file in the first root, never one in the working folder', async () => {
    const second = path.join(dir, 'second-root');
    await mkdir(second);
    await writeSmallWorkbook(path.join(second, 'only-here.xlsx'));
    const rooted = reader({ roots: [dir, second] });
    assert.equal((await rooted.read('small.xlsx', undefined)).path, small);
    assert.equal(
      (await rooted.read('./second-root/only-here.xlsx', undefined)).path,
      path.join(second, 'only-here.xlsx'),
    );
    // Only the first root anchors relative paths; the second is reached by an absolute path.
    await expectError(rooted.read('only-here.xlsx', undefined), {
      code: 'resource_not_found',
      message: 'only-here.xlsx: workbook not found',
    });
    assert.equal(
      (await rooted.read(path.join(second, 'only-here.xlsx'), undefined)).path,
      path.join(second, 'only-here.xlsx'),
    );
    // Relative to the working folder it would exist; relative to the root it leaves the roots.
    await expectError(rooted.read(path.relative(dir, path.join(process.cwd(), 'x.xlsx')), undefined), {
      code: 'invalid_tool_input',
      message: 'x.xlsx: path is outside the allowed workbook folders',
      field: 'path',
    });
  });

  let allowed: string;
  let outside: string;
  before(async () => {
    allowed = path.join(dir, 'allowed');
    outside = path.join(dir, 'outside');
    await mkdir(allowed);
    await mkdir(outside);
    await writeSmallWorkbook(path.join(allowed, 'in.xlsx'));
    await writeSmallWorkbook(path.join(outside, 'secret.xlsx'));
    await symlink(path.join(outside, 'secret.xlsx'), path.join(allowed, 'link-out.xlsx'));
    await symlink(path.join(allowed, 'in.xlsx'), path.join(outside, 'link-in.xlsx'));
  });

  const refused = (name: string) => ({
    code: 'invalid_tool_input',
    message: `${name}: path is outside the allowed workbook folders`,
    field: 'path',
  });

  it('reads inside a root, and through a symbolic link that stays inside', async () => {
    const confined = reader({ roots: [allowed] });
    assert.equal(
      (await confined.read(path.join(allowed, 'in.xlsx'), undefined)).path,
      path.join(allowed, 'in.xlsx'),
    );
    // A link outside the roots to a file inside: what counts is where it leads.
    assert.equal(
      (await confined.read(path.join(outside, 'link-in.xlsx'), undefined)).path,
      path.join(allowed, 'in.xlsx'),
    );
  });

  it('answers the same for an outside file that exists and one that does not', async () => {
    const confined = reader({ roots: [allowed, path.join(dir, 'no-such-root')] });
    await expectError(confined.read(path.join(outside, 'secret.xlsx'), undefined), refused('secret.xlsx'));
    await expectError(confined.read(path.join(outside, 'ghost.xlsx'), undefined), refused('ghost.xlsx'));
    await expectError(
      confined.read(path.join(allowed, '..', 'outside', 'secret.xlsx'), undefined),
      refused('secret.xlsx'),
    );
    await expectError(
      confined.read(path.join(allowed, 'link-out.xlsx'), undefined),
      refused('link-out.xlsx'),
    );
    await expectError(confined.read(path.join(dir, 'allowed-twin', 'x.xlsx'), undefined), refused('x.xlsx'));
    // Inside the root, a missing file is reported as missing.
    await expectError(confined.read(path.join(allowed, 'ghost.xlsx'), undefined), {
      code: 'resource_not_found',
      message: 'ghost.xlsx: workbook not found',
    });
  });

  it('leaves any readable path open when unset', async () => {
    assert.equal((await reader().read(path.join(outside, 'secret.xlsx'), undefined)).sheets.length, 1);
  });
});

describe('worker pool', () => {
  const request = (file: string) => ({
    path: file,
    name: path.basename(file),
    password: undefined,
    bounds: DEFAULTS,
  });

  it('runs at most `size` reads at once; the rest wait in order', async () => {
    const pool = new WorkerPool({
      size: 1,
      heapMb: 256,
      deadlineMs: 20_000,
      queueMax: 4,
      queueWaitMs: 20_000,
    });
    try {
      const order: number[] = [];
      const runs = [0, 1, 2].map((i) => pool.run(request(small)).then(() => order.push(i)));
      assert.deepEqual(pool.load, { running: 1, queued: 2, idle: 0, size: 1 });
      await Promise.all(runs);
      assert.deepEqual(order, [0, 1, 2]);
      assert.deepEqual(pool.load, { running: 0, queued: 0, idle: 1, size: 1 });
    } finally {
      await pool.close();
    }
  });

  it('stops a read at the deadline with resource_unavailable, and reads again afterwards', async () => {
    await expectError(reader({ deadlineMs: 100 }).read(long, undefined), {
      code: 'resource_unavailable',
      message: 'long.xlsx: workbook exceeds processing limits (time limit of 100 ms)',
    });
    const model = await reader().read(long, undefined);
    assert.equal(model.sheets[0]?.row_count, 7000);
  });

  it('turns running out of worker heap into resource_unavailable', async () => {
    const names = `<definedNames><definedName name="big">${'A'.repeat(100_000_000)}</definedName></definedNames>`;
    const file = await put(
      path.join(dir, 'heavy.xlsx'),
      rawXlsx({ sheets: [{ name: 'S' }], definedNames: names }),
    );
    await expectError(reader({ workerHeapMb: 64 }).read(file, undefined), {
      code: 'resource_unavailable',
      message: 'heavy.xlsx: workbook exceeds processing limits (memory limit of 64 MB)',
    });
  });

  it('rejects with the abort reason, queued or running', async () => {
    const aborted = AbortSignal.abort(new Error('caller gave up'));
    await assert.rejects(reader().read(small, undefined, aborted), /caller gave up/);
    const controller = new AbortController();
    const running = reader().read(long, undefined, controller.signal);
    setTimeout(() => controller.abort(new Error('stop now')), 30);
    await assert.rejects(running, /stop now/);
  });

  it('rejects reads after close', async () => {
    const closing = reader();
    await closing.close();
    await expectError(closing.read(small, undefined), {
      code: 'resource_unavailable',
      message: 'small.xlsx: workbook cannot be opened (the reader is closed)',
    });
  });
});

describe('compiled build', () => {
  it('starts its worker from worker.js', async () => {
    const out = path.join(ROOT, 'node_modules', '.cache', `workbook-build-${process.pid}`);
    const config = path.join(dir, 'tsconfig.json');
    await writeFile(
      config,
      JSON.stringify({
        extends: path.join(ROOT, 'tsconfig.build.json'),
        compilerOptions: { outDir: out, rootDir: path.join(ROOT, 'src'), noEmitOnError: false },
        include: [path.join(ROOT, 'src', 'workbook', '**', '*.ts')],
      }),
    );
    try {
      spawnSync(
        process.execPath,
        [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config],
        {
          encoding: 'utf8',
        },
      );
      const script = `const { createWorkbookReader } = await import(${JSON.stringify(
        path.join(out, 'workbook', 'index.js'),
      )}); const r = createWorkbookReader(${JSON.stringify({ ...DEFAULTS, roots: [dir] })}); const m = await r.read(${JSON.stringify(
        small,
      )}); await r.close(); console.log(JSON.stringify(m.sheets[0].sample));`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), [
        { _row: 2, city: 'Oslo', count: 3 },
        { _row: 3, city: 'Lima', count: 5 },
      ]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
