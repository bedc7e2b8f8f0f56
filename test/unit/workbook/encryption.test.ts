/**
 * Password-protected workbooks: agile and standard encryption from officecrypto-tool, checked
 * headers (an attacker's spinCount, unsupported schemes), and the contract's password error.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import CFB from 'cfb';
import officeCrypto from 'officecrypto-tool';
import { loadConfig } from '../../../src/config.ts';
import { inspectEncryptionInfo } from '../../../src/workbook/encryption.ts';
import type { WorkbookBounds, WorkbookModel } from '../../../src/workbook/model.ts';
import { readWorkbook } from '../../../src/workbook/read-workbook.ts';
import { assertWorkbookError, type ExpectedWorkbookError } from '../../support/workbook-errors.ts';
import { fixtureDir, writeSmallWorkbook } from '../../support/workbook-fixtures.ts';
import { withEncryptionInfo } from '../../support/workbook-fixtures-crypto.ts';
import { put } from '../../support/workbook-fixtures-zip.ts';

const BOUNDS: WorkbookBounds = loadConfig({}).workbook;
const PASSWORD = 'S3cret pw';

let dir: string;
let cleanup: () => Promise<void>;
let plainModel: WorkbookModel;
let agile: Buffer;
let standard: Buffer;

function read(file: string, password: string | undefined): Promise<WorkbookModel> {
  return readWorkbook({ path: file, name: path.basename(file), password, bounds: BOUNDS });
}

async function expectError(promise: Promise<unknown>, expected: ExpectedWorkbookError): Promise<void> {
  await assert.rejects(promise, (thrown: unknown) => {
    const error = assertWorkbookError(thrown, expected);
    assert.ok(!error.message.includes(PASSWORD));
    return true;
  });
}

const passwordError = (name: string) => ({
  code: 'invalid_tool_input',
  message: `${name}: workbook password is missing or incorrect`,
  field: 'password',
});

before(async () => {
  ({ dir, cleanup } = await fixtureDir('crypto'));
  const plainFile = await writeSmallWorkbook(path.join(dir, 'plain.xlsx'));
  const plain = await readFile(plainFile);
  plainModel = await read(plainFile, undefined);
  agile = officeCrypto.encrypt(plain, { password: PASSWORD });
  standard = officeCrypto.encrypt(plain, { password: PASSWORD, type: 'standard' });
});
after(() => cleanup());

describe('agile encryption (4.4)', () => {
  it('decrypts with the right password to the same profile as the plain file', async () => {
    const file = await put(path.join(dir, 'agile.xlsx'), agile);
    const model = await read(file, PASSWORD);
    assert.deepEqual(model.sheets, plainModel.sheets);
    assert.equal(model.path, file);
    assert.ok(!JSON.stringify(model).includes(PASSWORD));
  });

  it('answers a wrong or missing password with the contract error', async () => {
    const file = await put(path.join(dir, 'agile-locked.xlsx'), agile);
    await expectError(read(file, 'wrong'), passwordError('agile-locked.xlsx'));
    await expectError(read(file, undefined), passwordError('agile-locked.xlsx'));
    await expectError(read(file, ''), passwordError('agile-locked.xlsx'));
    await expectError(read(file, 'x'.repeat(256)), passwordError('agile-locked.xlsx'));
  });

  it('refuses a spinCount over WORKBOOK_MAX_SPIN_COUNT at once, before the password is looked at', async () => {
    const file = await put(
      path.join(dir, 'spin.xlsx'),
      withEncryptionInfo(agile, (xml) => xml.replace(/spinCount="\d+"/, 'spinCount="10000000"')),
    );
    const over = {
      code: 'resource_unavailable',
      message:
        'spin.xlsx: workbook exceeds processing limits (password key derivation spinCount 10000000 is over the limit of 1000000)',
    };
    const started = performance.now();
    await expectError(read(file, PASSWORD), over);
    await expectError(read(file, undefined), over);
    assert.ok(performance.now() - started < 2000);
  });

  it('refuses a derivation the calibrated hash rate cannot finish before the deadline', async () => {
    const file = await put(path.join(dir, 'slow.xlsx'), agile);
    // 1 round per ms: Excel's 100,000 rounds, three derivations, would take 300 s.
    const slowMachine = { SHA1: 1, SHA256: 1, SHA384: 1, SHA512: 1 };
    const started = performance.now();
    await expectError(
      readWorkbook({
        path: file,
        name: 'slow.xlsx',
        password: PASSWORD,
        bounds: BOUNDS,
        hashRates: slowMachine,
      }),
      {
        code: 'resource_unavailable',
        message:
          'slow.xlsx: workbook exceeds processing limits (password key derivation (spinCount 100000) would take about 300 s)',
      },
    );
    assert.ok(performance.now() - started < 2000);
  });

  it('treats anything beyond the checked parameters as unsupported encryption', async () => {
    const unsupported = { code: 'resource_unavailable', message: 'workbook encryption is not supported' };
    const cases: Array<[string, Buffer]> = [
      [
        'spin-over-max',
        withEncryptionInfo(agile, (xml) => xml.replace(/spinCount="\d+"/, 'spinCount="10000001"')),
      ],
      [
        'des',
        withEncryptionInfo(agile, (xml) => xml.replaceAll('cipherAlgorithm="AES"', 'cipherAlgorithm="DES"')),
      ],
      [
        'md5',
        withEncryptionInfo(agile, (xml) => xml.replaceAll('hashAlgorithm="SHA512"', 'hashAlgorithm="MD5"')),
      ],
      ['cfb-mode', withEncryptionInfo(agile, (xml) => xml.replaceAll('ChainingModeCBC', 'ChainingModeCFB'))],
      [
        'certificate',
        withEncryptionInfo(agile, (xml) =>
          xml.replace(
            'uri="http://schemas.microsoft.com/office/2006/keyEncryptor/password"',
            'uri="http://schemas.microsoft.com/office/2006/keyEncryptor/certificate"',
          ),
        ),
      ],
      ['extensible', withEncryptionInfo(agile, (xml) => xml, [4, 3])],
      ['version-5', withEncryptionInfo(agile, (xml) => xml, [5, 5])],
    ];
    for (const [label, bytes] of cases) {
      const file = await put(path.join(dir, `${label}.xlsx`), bytes);
      await expectError(read(file, PASSWORD), unsupported);
    }
  });
});

describe('standard encryption (x.2)', () => {
  it('decrypts with the right password', async () => {
    const file = await put(path.join(dir, 'standard.xlsx'), standard);
    assert.deepEqual((await read(file, PASSWORD)).sheets, plainModel.sheets);
  });

  it('uses the password exactly as given', async () => {
    const file = await put(path.join(dir, 'standard-locked.xlsx'), standard);
    for (const attempt of ['s3cret pw', 'S3cret pw ', ' S3cret pw', 'wrong', undefined])
      await expectError(read(file, attempt), passwordError('standard-locked.xlsx'));
  });

  it('checks the header: AES-128 with SHA-1 only', () => {
    const container = CFB.read(standard, { type: 'buffer' });
    const info = Buffer.from(CFB.find(container, '/EncryptionInfo')!.content);
    assert.deepEqual(inspectEncryptionInfo(info), { kind: 'standard', spinCount: 50_000 });
    const rc4 = Buffer.from(info);
    rc4.writeUInt32LE(0x6801, 12 + 8);
    assert.throws(() => inspectEncryptionInfo(rc4), /workbook encryption is not supported/);
    const aes256 = Buffer.from(info);
    aes256.writeUInt32LE(256, 12 + 16);
    assert.throws(() => inspectEncryptionInfo(aes256), /workbook encryption is not supported/);
  });
});

describe('passwords on plain workbooks', () => {
  it('are ignored', async () => {
    const file = await put(
      path.join(dir, 'plain-with-password.xlsx'),
      await readFile(path.join(dir, 'plain.xlsx')),
    );
    assert.deepEqual((await read(file, 'anything')).sheets, plainModel.sheets);
  });
});
