// Workbook reader benchmark: `npm run bench:workbook` (add `-- --write` to update bench/RESULTS.md).
//
// Profiles a generated 100k-row × 10-column workbook and a 1M-row one with this reader and, in the
// same run, with exceljs's streaming reader and SheetJS as reference points. Every engine runs in
// its own child process (so peak RSS is per engine), from one compiled build of this file and
// src/workbook (plain Node, no tsx loader in anyone's figures); the two reference engines feed their
// cells into the same SheetProfiler, so all three compute the same profile. This reader is also
// timed from the TypeScript sources under tsx, the way `npm start` runs it.
//
// Wall time is measured inside the child from just before the read to the finished profile; for
// this reader it includes starting its worker thread. Peak RSS is the child's maximum resident set
// size (VmHWM), worker threads included. Medians over BENCH_ROUNDS interleaved rounds (1M file:
// BENCH_ROUNDS_1M). Files are cached in node_modules/.cache/workbook-bench.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CellObject } from 'xlsx';
import { formatDate, formatDateTime } from '../src/workbook/dates.ts';
import { createWorkbookReader } from '../src/workbook/index.ts';
import type { CellValue, WorkbookSheet } from '../src/workbook/model.ts';
import { RowCells, SheetProfiler } from '../src/workbook/sheet-profile.ts';

const HERE = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(HERE), '..');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'workbook-bench');
const BUILD = path.join(CACHE, 'build');
const FIXTURE_VERSION = 1;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUNDS_1M = Number(process.env.BENCH_ROUNDS_1M ?? 1);
const CHILD_TIMEOUT_MS = 900_000;

/** Bounds for the benchmark: the defaults, but the 1M-row file (~70 MB) is over the default 50 MB file cap. */
const OPTIONS = {
  roots: undefined,
  maxFileBytes: 512 * 1024 * 1024,
  maxZipEntries: 10_000,
  maxPartBytes: 128 * 1024 * 1024,
  maxSheetBytes: 1024 * 1024 * 1024,
  maxSharedStrings: 2_000_000,
  maxCellChars: 32_767,
  maxColumns: 512,
  deadlineMs: 600_000,
  maxConcurrent: 1,
  maxPerCaller: 1,
  queueMax: 1,
  queueWaitMs: 0,
  workerHeapMb: 768,
  maxSpinCount: 1_000_000,
};

type Engine = 'reader' | 'exceljs-stream' | 'sheetjs' | 'reader-tsx';
const ENGINES: readonly Engine[] = ['reader', 'exceljs-stream', 'sheetjs'];

interface Measurement {
  engine: Engine;
  ms: number;
  rssMb: number;
  rows: number;
  sheet: WorkbookSheet;
}

// ---------------------------------------------------------------------------------------------
// Child side: one engine, one file, one JSON line on stdout.

/** exceljs cell values as the profile's typed values (dates as the reader writes them). */
function exceljsValue(value: unknown): { value: CellValue; error?: string } {
  if (value === null || value === undefined) return { value: null };
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return { value };
  if (value instanceof Date) {
    const ms = value.getTime();
    return { value: ms % 86_400_000 === 0 ? formatDate(ms) : formatDateTime(ms) };
  }
  const object = value as {
    error?: string;
    result?: unknown;
    richText?: Array<{ text: string }>;
    text?: string;
  };
  if (object.error !== undefined) return { value: null, error: object.error };
  if (object.richText !== undefined) return { value: object.richText.map((run) => run.text).join('') };
  if ('result' in object) return exceljsValue(object.result);
  if (object.text !== undefined) return { value: object.text };
  return { value: null };
}

// The engines' libraries are imported only in their own child, so no child carries another's code.
async function profileWithExceljs(file: string): Promise<WorkbookSheet> {
  const { default: ExcelJS } = await import('exceljs');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, {
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
  });
  for await (const worksheet of reader) {
    const name = (worksheet as unknown as { name?: string }).name ?? 'Data';
    const profiler = new SheetProfiler(name, { dateSystem: '1900', maxColumns: OPTIONS.maxColumns });
    const cells = new RowCells();
    for await (const row of worksheet) {
      cells.reset();
      row.eachCell((cell, col) => {
        const { value, error } = exceljsValue(cell.value);
        cells.push(col - 1, value, error);
      });
      profiler.addRow(row.number, row.hidden, cells);
    }
    return profiler.finish().sheet;
  }
  throw new Error('no sheet');
}

async function profileWithSheetjs(file: string): Promise<WorkbookSheet> {
  const { default: XLSX } = await import('xlsx');
  const workbook = XLSX.readFile(file, { dense: true, cellDates: true, cellHTML: false, cellText: false });
  const name = workbook.SheetNames[0]!;
  const sheet = workbook.Sheets[name]!;
  // SheetJS 0.18 dense mode: the sheet is an array of rows of cell objects.
  const rows = sheet as unknown as Array<Array<CellObject | undefined> | undefined>;
  const range = XLSX.utils.decode_range(sheet['!ref'] ?? 'A1:A1');
  const hidden = sheet['!rows'] ?? [];
  const profiler = new SheetProfiler(name, { dateSystem: '1900', maxColumns: OPTIONS.maxColumns });
  const cells = new RowCells();
  for (let r = range.s.r; r <= range.e.r; r++) {
    const row = rows[r];
    if (row === undefined) continue;
    cells.reset();
    for (let c = 0; c < row.length; c++) {
      const cell = row[c];
      if (cell === undefined || cell.t === 'z') continue;
      if (cell.t === 'e') cells.push(c, null, String(cell.w ?? 'error'));
      else if (cell.v instanceof Date) {
        const ms = cell.v.getTime();
        cells.push(c, ms % 86_400_000 === 0 ? formatDate(ms) : formatDateTime(ms));
      } else cells.push(c, (cell.v as CellValue | undefined) ?? null);
    }
    profiler.addRow(r + 1, hidden[r]?.hidden ?? false, cells);
  }
  return profiler.finish().sheet;
}

async function child(engine: Engine, file: string): Promise<void> {
  const started = performance.now();
  let sheet: WorkbookSheet;
  if (engine === 'reader' || engine === 'reader-tsx') {
    const reader = createWorkbookReader(OPTIONS);
    const model = await reader.read(file, undefined);
    sheet = model.sheets[0]!;
    const ms = performance.now() - started;
    await reader.close();
    report(engine, ms, sheet);
    return;
  }
  sheet = engine === 'exceljs-stream' ? await profileWithExceljs(file) : await profileWithSheetjs(file);
  report(engine, performance.now() - started, sheet);
}

/**
 * This process's peak RSS. On Linux, VmHWM: getrusage's maxRSS survives fork and exec, so a child
 * of a parent that grew (the fixture generation) would report the parent's peak.
 */
function peakRssMb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) / 1024;
  } catch {
    // Not Linux: fall through.
  }
  return process.resourceUsage().maxRSS / 1024;
}

function report(engine: Engine, ms: number, sheet: WorkbookSheet): void {
  const rssMb = peakRssMb();
  process.stdout.write(`${JSON.stringify({ engine, ms, rssMb, rows: sheet.row_count, sheet })}\n`);
}

// ---------------------------------------------------------------------------------------------
// Parent side: fixtures, build, rounds, table.

/** The engineering notes' workload: 10 columns, shared strings, dates, blanks, odd text, errors. */
async function writeFixture(file: string, rows: number): Promise<void> {
  const { default: ExcelJS } = await import('exceljs');
  const partial = `${file}.partial`;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: partial,
    useSharedStrings: true,
    useStyles: true,
  });
  const ws = wb.addWorksheet('Data');
  ws.columns = [
    { header: 'id', key: 'id' },
    { header: 'name', key: 'name' },
    { header: 'region', key: 'region' },
    { header: 'amount', key: 'amount', style: { numFmt: '0.00' } },
    { header: 'qty', key: 'qty' },
    { header: 'active', key: 'active' },
    { header: 'order_date', key: 'order_date', style: { numFmt: 'yyyy-mm-dd' } },
    { header: 'updated_at', key: 'updated_at', style: { numFmt: 'yyyy-mm-dd hh:mm:ss' } },
    { header: 'score', key: 'score' },
    { header: 'note', key: 'note' },
  ];
  const regions = ['north', 'south', 'east', 'west', 'central'];
  const oddEvery = Math.floor(rows / 9);
  const errorEvery = Math.floor(rows / 4);
  for (let i = 1; i <= rows; i++) {
    ws.addRow({
      id: i,
      name: `name-${i}`,
      region: regions[i % 5],
      amount: i % 100 === 0 ? null : Math.round(((i * 1.37) % 1000) * 100) / 100,
      qty: i % oddEvery === 0 ? 'n/a' : i % 50,
      active: i % 3 === 0,
      order_date: new Date(Date.UTC(2020, 0, 1 + (i % 1000))),
      updated_at: new Date(Date.UTC(2021, 0, 1) + i * 61_000),
      score: i % 11 === 0 ? null : i % errorEvery === 0 ? { error: '#N/A' } : (i % 97) / 7,
      note: i % 10 === 0 ? `note ${i}` : null,
    }).commit();
  }
  ws.commit();
  await wb.commit();
  await rename(partial, file);
}

async function fixture(rows: number): Promise<string> {
  const file = path.join(CACHE, `rows-${rows}-v${FIXTURE_VERSION}.xlsx`);
  if (!existsSync(file)) {
    const started = performance.now();
    process.stdout.write(`generating ${rows.toLocaleString('en')} rows with the exceljs streaming writer… `);
    await writeFixture(file, rows);
    process.stdout.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  return file;
}

/** Compiles this file and src/workbook, so every engine runs as plain JavaScript. */
async function build(): Promise<string> {
  const config = path.join(CACHE, 'tsconfig.json');
  await writeFile(
    config,
    JSON.stringify({
      extends: path.join(ROOT, 'tsconfig.build.json'),
      compilerOptions: { outDir: BUILD, rootDir: ROOT, noEmitOnError: false },
      include: [HERE, path.join(ROOT, 'src', 'workbook', '**', '*.ts')],
    }),
  );
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', config], { encoding: 'utf8' });
  const entry = path.join(BUILD, 'bench', 'workbook.js');
  if (!existsSync(entry)) throw new Error(`build failed:\n${run.stdout}${run.stderr}`);
  return entry;
}

function runChild(entry: string, engine: Engine, file: string): Promise<Measurement | string> {
  const args =
    engine === 'reader-tsx'
      ? ['--import', 'tsx', HERE, '--child', engine, file]
      : ['--max-old-space-size=8192', entry, '--child', engine, file];
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const timer = setTimeout(() => proc.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as Measurement);
      else if (signal === 'SIGKILL') resolve(`timed out after ${CHILD_TIMEOUT_MS / 1000} s`);
      else
        resolve(
          /heap out of memory/i.test(err)
            ? 'out of memory'
            : `failed (${code}): ${err.trim().split('\n').slice(-3).join(' ')}`,
        );
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

interface Summary {
  engine: Engine;
  rows: number;
  ms: number;
  rssMb: number;
  runs: number[];
  failure?: string;
  sheet?: WorkbookSheet;
}

/** What the reference engines' profiles disagree on with this reader's (row count, types, counts). */
function disagreements(reference: WorkbookSheet, other: WorkbookSheet): string[] {
  const out: string[] = [];
  if (reference.row_count !== other.row_count) out.push(`row_count ${other.row_count}`);
  for (const column of reference.columns) {
    const theirs = other.columns.find((c) => c.name === column.name);
    if (theirs === undefined) {
      out.push(`${column.name} missing`);
      continue;
    }
    for (const key of ['type', 'filled', 'blank', 'distinct', 'min', 'max', 'odd'] as const) {
      if (column[key] !== theirs[key])
        out.push(`${column.name}.${key} ${String(theirs[key])} (reader ${String(column[key])})`);
    }
  }
  return out;
}

async function parent(): Promise<void> {
  await mkdir(CACHE, { recursive: true });
  const write = process.argv.includes('--write');
  const files: Array<{ rows: number; file: string; rounds: number }> = [
    { rows: 100_000, file: await fixture(100_000), rounds: ROUNDS },
    { rows: 1_000_000, file: await fixture(1_000_000), rounds: ROUNDS_1M },
  ];
  const entry = await build();
  const summaries: Summary[] = [];
  for (const { rows, file, rounds } of files) {
    const size = (await stat(file)).size;
    process.stdout.write(
      `\n${rows.toLocaleString('en')} rows × 10 columns, ${(size / 1e6).toFixed(1)} MB file, ${rounds} round(s)\n`,
    );
    const engines: Engine[] = rows === 100_000 ? [...ENGINES, 'reader-tsx'] : [...ENGINES];
    const results = new Map<Engine, Measurement[]>();
    const failures = new Map<Engine, string>();
    for (let round = 0; round < rounds; round++) {
      for (const engine of engines) {
        if (failures.has(engine)) continue;
        const result = await runChild(entry, engine, file);
        if (typeof result === 'string') failures.set(engine, result);
        else results.set(engine, [...(results.get(engine) ?? []), result]);
        process.stdout.write(
          `  round ${round + 1} ${engine.padEnd(15)} ${typeof result === 'string' ? result : `${(result.ms / 1000).toFixed(2)} s, ${result.rssMb.toFixed(0)} MB`}\n`,
        );
      }
    }
    for (const engine of engines) {
      const runs = results.get(engine) ?? [];
      const failure = failures.get(engine);
      summaries.push({
        engine,
        rows,
        ms: runs.length > 0 ? median(runs.map((r) => r.ms)) : Number.NaN,
        rssMb: runs.length > 0 ? median(runs.map((r) => r.rssMb)) : Number.NaN,
        runs: runs.map((r) => r.ms),
        ...(failure !== undefined ? { failure } : {}),
        ...(runs[0] !== undefined ? { sheet: runs[0].sheet } : {}),
      });
    }
  }
  const markdown = render(summaries);
  process.stdout.write(`\n${markdown}\n`);
  if (write) await writeResults(markdown);
}

function render(summaries: Summary[]): string {
  const get = (engine: Engine, rows: number) => summaries.find((s) => s.engine === engine && s.rows === rows);
  const lines: string[] = [];
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  lines.push(
    `Run ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end.`,
    '',
    '| File | Engine | Wall time (median) | Rows/s | Peak RSS | Time vs reader | RSS vs reader |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const rows of [100_000, 1_000_000]) {
    const base = get('reader', rows);
    for (const summary of summaries.filter((s) => s.rows === rows)) {
      const label = {
        reader: 'this reader (compiled)',
        'reader-tsx': 'this reader (tsx, as npm start)',
        'exceljs-stream': 'exceljs 4.4 streaming',
        sheetjs: 'SheetJS xlsx 0.18.5',
      }[summary.engine];
      if (summary.failure !== undefined && Number.isNaN(summary.ms)) {
        lines.push(`| ${rows / 1000}k | ${label} | ${summary.failure} | | | | |`);
        continue;
      }
      const timeRatio = base ? `${(summary.ms / base.ms).toFixed(2)}×` : '';
      const rssRatio = base ? `${(summary.rssMb / base.rssMb).toFixed(2)}×` : '';
      lines.push(
        `| ${rows >= 1_000_000 ? `${rows / 1_000_000}M` : `${rows / 1000}k`} | ${label} | ${(summary.ms / 1000).toFixed(2)} s | ${Math.round(
          rows / (summary.ms / 1000),
        ).toLocaleString('en')} | ${summary.rssMb.toFixed(0)} MB | ${timeRatio} | ${rssRatio} |`,
      );
    }
  }
  const r100 = get('reader', 100_000);
  const r1m = get('reader', 1_000_000);
  const ex100 = get('exceljs-stream', 100_000);
  if (r100 && r1m && ex100) {
    const check = (ok: boolean) => (ok ? 'met' : 'NOT met');
    lines.push(
      '',
      'Goals:',
      `- 100k × 10 in ≤ 1.5 s: ${(r100.ms / 1000).toFixed(2)} s (${check(r100.ms <= 1500)}).`,
      `- ≤ 120 MB peak RSS: ${r100.rssMb.toFixed(0)} MB (${check(r100.rssMb <= 120)}).`,
      `- ≥ 2× faster than exceljs streaming: ${(ex100.ms / r100.ms).toFixed(2)}× (${check(ex100.ms / r100.ms >= 2)}).`,
      `- 1M-row peak RSS within 1.5× of the 100k one: ${(r1m.rssMb / r100.rssMb).toFixed(2)}× (${check(r1m.rssMb / r100.rssMb <= 1.5)}).`,
    );
  }
  lines.push(
    '',
    'Agreement with this reader’s profile (row count, types, filled/blank/distinct, min/max, odd):',
  );
  for (const summary of summaries) {
    if (summary.engine === 'reader' || summary.sheet === undefined) continue;
    const base = get('reader', summary.rows)?.sheet;
    if (base === undefined) continue;
    const diff = disagreements(base, summary.sheet);
    lines.push(
      `- ${summary.rows.toLocaleString('en')} rows, ${summary.engine}: ${diff.length === 0 ? 'identical' : diff.join('; ')}`,
    );
  }
  return lines.join('\n');
}

const START = '<!-- workbook-bench:start -->';
const END = '<!-- workbook-bench:end -->';

/** Replaces this benchmark's section of bench/RESULTS.md, leaving the rest of the file alone. */
async function writeResults(markdown: string): Promise<void> {
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const section = `${START}\n${markdown}\n${END}`;
  const current = existsSync(file) ? await readFile(file, 'utf8') : '# Benchmark results\n';
  const at = current.indexOf(START);
  const next =
    at === -1
      ? `${current.trimEnd()}\n\n## Workbook reader (\`npm run bench:workbook\`)\n\n${section}\n`
      : `${current.slice(0, at)}${section}${current.slice(current.indexOf(END) + END.length)}`;
  await writeFile(file, next);
  process.stdout.write(`\nwrote ${path.relative(ROOT, file)}\n`);
}

const childAt = process.argv.indexOf('--child');
if (childAt !== -1) await child(process.argv[childAt + 1] as Engine, process.argv[childAt + 2]!);
else await parent();
