/**
 * Cross-check fixtures from an independent writer: Python's openpyxl (workbooks) and
 * msoffcrypto-tool (agile encryption), so the reader is not only tested on exceljs files.
 * Needs a Python with `openpyxl` and `msoffcrypto-tool` (scripts/python-fixtures.sh prepares one);
 * the tests skip with the reason otherwise, except under CI (skipUnlessCI), where a missing tool fails the run.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const PYTHON_PASSWORD = 'Pa55 word';

const SCRIPT = `import sys, datetime, io
import openpyxl
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.table import Table
from openpyxl.utils.datetime import CALENDAR_MAC_1904
import msoffcrypto
from msoffcrypto.format.ooxml import OOXMLFile
out = sys.argv[1]
wb = openpyxl.Workbook()
ws = wb.active
ws.title = 'People'
ws.append(['name', 'born', 'joined', 'score', 'rank', 'active', 'code'])
rows = [
  ['Ada', datetime.date(1815, 12, 10), datetime.datetime(2020, 1, 2, 9, 30, 0), 91.5, 1, True, '007'],
  ['Alan', datetime.date(1912, 6, 23), datetime.datetime(2021, 3, 4, 17, 45, 30), 88.25, 2, False, '042'],
  ['Grace', datetime.date(1906, 12, 9), datetime.datetime(2019, 7, 1, 0, 0, 0), 95, 3, True, '007'],
  ['Linus', datetime.date(1969, 12, 28), datetime.datetime(2022, 12, 31, 23, 59, 59), 'n/a', 4, True, '100'],
]
for r in rows: ws.append(r)
for r in range(2, 6):
  ws.cell(r, 2).number_format = 'yyyy-mm-dd'
  ws.cell(r, 3).number_format = 'yyyy-mm-dd hh:mm:ss'
ws.row_dimensions[3].hidden = True
ws.add_table(Table(displayName='PeopleTable', ref='A1:G5'))
wb.defined_names['Scores'] = DefinedName('Scores', attr_text='People!$D$2:$D$5')
ws.defined_names['LocalTop'] = DefinedName('LocalTop', attr_text='People!$A$1')
titled = wb.create_sheet('Titled')
titled['A1'] = 'Report title'
titled.append([])
titled.append(['region', 'total'])
titled.append(['north', 10])
titled.append(['south', 20])
secret = wb.create_sheet('Secret'); secret.sheet_state = 'hidden'; secret.append(['k', 'v']); secret.append(['a', 1])
deep = wb.create_sheet('Deep'); deep.sheet_state = 'veryHidden'; deep.append(['x', 'y']); deep.append([1, 2])
wb.save(out + '/openpyxl.xlsx')

mac = openpyxl.Workbook(); mac.epoch = CALENDAR_MAC_1904
m = mac.active; m.title = 'Mac'
m.append(['day', 'stamp']); m.append([datetime.date(2024, 1, 15), datetime.datetime(2024, 1, 15, 8, 30, 0)])
m.append([datetime.date(1904, 1, 2), datetime.datetime(2000, 2, 29, 12, 0, 0)])
for r in range(2, 4):
  m.cell(r, 1).number_format = 'yyyy-mm-dd'; m.cell(r, 2).number_format = 'yyyy-mm-dd hh:mm:ss'
mac.save(out + '/openpyxl-1904.xlsx')

# openpyxl writes every formula without a cached value (<f>A2*2</f><v />): a long and a short sheet,
# each with a lone formula below the data, the long one's past the 5000-row profile cap.
fx = openpyxl.Workbook()
for title, n in (('Long', 6000), ('Short', 10)):
  f = fx.create_sheet(title)
  f.append(['id', 'double'])
  for r in range(2, n + 2): f.append([r - 1, '=A%d*2' % r])
  f.cell(n + 4, 4).value = '=SUM(A:A)'
fx.remove(fx.active)
fx.save(out + '/openpyxl-formulas.xlsx')

with open(out + '/openpyxl.xlsx', 'rb') as f, open(out + '/msoffcrypto.xlsx', 'wb') as o:
  OOXMLFile(f).encrypt('Pa55 word', o)
print('ok')
`;

/**
 * Interpreters to try, first one with both modules wins: WORKBOOK_FIXTURES_PYTHON, the virtual
 * environment scripts/python-fixtures.sh prepares in the project cache, then python3 on PATH.
 * Nothing is installed here.
 */
function candidates(): string[] {
  const cacheRoot =
    process.env.DAGU_CACHE_DIR ??
    path.join(
      process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? '/tmp', '.cache'),
      'dagu-mcp-gateway',
    );
  const list = [path.join(cacheRoot, 'python-fixtures', 'bin', 'python'), 'python3'];
  const explicit = process.env.WORKBOOK_FIXTURES_PYTHON;
  return explicit ? [explicit, ...list] : list;
}

let chosen: string | undefined;
let reason: string | undefined;

function choose(): void {
  if (chosen !== undefined || reason !== undefined) return;
  const problems: string[] = [];
  for (const python of candidates()) {
    const probe = spawnSync(python, ['-c', 'import openpyxl, msoffcrypto'], { encoding: 'utf8' });
    if (probe.status === 0) {
      chosen = python;
      return;
    }
    problems.push(
      probe.error !== undefined
        ? `${python}: not available`
        : `${python}: ${probe.stderr.trim().split('\n').pop()}`,
    );
  }
  reason = `no Python with openpyxl and msoffcrypto-tool (run scripts/python-fixtures.sh): ${problems.join('; ')}`;
}

/** Why the Python fixtures cannot be made here, or undefined when they can (give it to skipUnlessCI). */
export function pythonUnavailable(): string | undefined {
  choose();
  return reason;
}

/** Writes openpyxl.xlsx, openpyxl-1904.xlsx, openpyxl-formulas.xlsx and msoffcrypto.xlsx into `dir`. */
export function writePythonFixtures(dir: string): void {
  choose();
  if (chosen === undefined) throw new Error(reason);
  const run = spawnSync(chosen, ['-', dir], { input: SCRIPT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`python fixtures failed: ${run.stderr}`);
}
