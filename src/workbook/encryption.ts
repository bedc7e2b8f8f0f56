/**
 * Password-protected workbooks: an OLE/CFB container with `EncryptionInfo` and `EncryptedPackage`
 * streams (MS-OFFCRYPTO). The header is checked here before officecrypto-tool sees it, because the
 * library trusts the file: an attacker-chosen `spinCount` runs the key derivation for minutes.
 * Supported: agile (4.4) with AES-CBC and SHA-1/2, and standard (x.2) with AES-128, which is all
 * officecrypto-tool decrypts correctly. Everything else is "not supported".
 */
import CFB from 'cfb';
import officeCrypto from 'officecrypto-tool';
import { WorkbookFormatError, WorkbookLimitError, workbookErrors } from './errors.ts';
import {
  type EncryptionScheme,
  estimateDerivationMs,
  HASH_ALGORITHMS,
  type HashAlgorithm,
  type HashRates,
} from './key-derivation.ts';
import { localName, parseXml } from './xml.ts';

/** MS-OFFCRYPTO 2.3.4.11: spinCount MUST NOT exceed 10,000,000. Excel writes 100,000. */
export const MAX_SPIN_COUNT = 10_000_000;
/** Excel's limit; a longer password cannot be right. */
export const MAX_PASSWORD_LENGTH = 255;

const AGILE_HASHES: ReadonlySet<string> = new Set(HASH_ALGORITHMS);
const KEY_BITS = new Set([128, 192, 256]);

function checkAgileParams(attributes: Record<string, string>): boolean {
  return (
    attributes.cipherAlgorithm === 'AES' &&
    attributes.cipherChaining === 'ChainingModeCBC' &&
    AGILE_HASHES.has(attributes.hashAlgorithm ?? '') &&
    Number(attributes.blockSize) === 16 &&
    KEY_BITS.has(Number(attributes.keyBits)) &&
    typeof attributes.saltValue === 'string'
  );
}

/** Reads the EncryptionInfo stream's header; throws "not supported" for anything this reader cannot decrypt. */
export function inspectEncryptionInfo(info: Buffer): EncryptionScheme {
  if (info.length < 8) throw workbookErrors.unsupportedEncryption();
  const major = info.readUInt16LE(0);
  const minor = info.readUInt16LE(2);
  if (major === 4 && minor === 4) {
    let keyData: Record<string, string> | undefined;
    let passwordKey: Record<string, string> | undefined;
    let passwordEncryptor = false;
    try {
      parseXml(info.subarray(8).toString('utf8'), 'EncryptionInfo', {
        open(local, tag) {
          if (local === 'keyData') keyData = tag.attributes;
          else if (local === 'keyEncryptor')
            passwordEncryptor =
              tag.attributes.uri === 'http://schemas.microsoft.com/office/2006/keyEncryptor/password';
          else if (local === 'encryptedKey' && passwordEncryptor && passwordKey === undefined) {
            passwordKey = Object.fromEntries(
              Object.entries(tag.attributes).map(([key, value]) => [localName(key), value]),
            );
          }
        },
      });
    } catch {
      throw workbookErrors.unsupportedEncryption();
    }
    if (keyData === undefined || passwordKey === undefined) throw workbookErrors.unsupportedEncryption();
    if (!checkAgileParams(keyData) || !checkAgileParams(passwordKey))
      throw workbookErrors.unsupportedEncryption();
    const spinCount = Number(passwordKey.spinCount);
    if (!Number.isInteger(spinCount) || spinCount < 0 || spinCount > MAX_SPIN_COUNT)
      throw workbookErrors.unsupportedEncryption();
    return { kind: 'agile', hashAlgorithm: passwordKey.hashAlgorithm as HashAlgorithm, spinCount };
  }
  if (minor === 2 && major >= 2 && major <= 4 && info.length >= 12 + 32) {
    const flags = info.readUInt32LE(4);
    const headerSize = info.readUInt32LE(8);
    const algId = info.readUInt32LE(12 + 8);
    const algIdHash = info.readUInt32LE(12 + 12);
    const keySize = info.readUInt32LE(12 + 16);
    const cryptoApi = (flags & 0x04) !== 0;
    const aes = (flags & 0x20) !== 0;
    const external = (flags & 0x10) !== 0;
    if (
      headerSize < 32 ||
      !cryptoApi ||
      !aes ||
      external ||
      (algId !== 0x660e && algId !== 0) ||
      (algIdHash !== 0x8004 && algIdHash !== 0) ||
      keySize !== 128
    )
      throw workbookErrors.unsupportedEncryption();
    // Standard encryption derives its key with a fixed 50,000 SHA-1 rounds.
    return { kind: 'standard', spinCount: 50_000 };
  }
  throw workbookErrors.unsupportedEncryption();
}

export interface DecryptOptions {
  name: string;
  password: string | undefined;
  /** Time the read may still take; a derivation estimated to take longer is refused up front. */
  budgetMs: number;
  /** The highest spinCount read at all (WORKBOOK_MAX_SPIN_COUNT). */
  maxSpinCount: number;
  /** This machine's hash rates, calibrated at start-up. */
  hashRates: HashRates;
}

/**
 * The zip bytes of an encrypted workbook. Missing or wrong password: the contract's password error;
 * a CFB file that is no encrypted workbook (a legacy .xls, say): not a valid workbook.
 */
export async function decryptWorkbook(file: Buffer, options: DecryptOptions): Promise<Buffer> {
  let container: CFB.CFB$Container;
  try {
    container = CFB.read(file, { type: 'buffer' });
  } catch {
    throw new WorkbookFormatError('corrupt OLE container');
  }
  const info = CFB.find(container, '/EncryptionInfo');
  const encryptedPackage = CFB.find(container, '/EncryptedPackage');
  if (info === null || encryptedPackage === null) {
    if (CFB.find(container, '/Workbook') !== null || CFB.find(container, '/Book') !== null)
      throw new WorkbookFormatError('a legacy .xls workbook; save it as .xlsx');
    throw new WorkbookFormatError('an OLE document that is not an encrypted workbook');
  }
  const scheme = inspectEncryptionInfo(Buffer.from(info.content));
  const { password, name } = options;
  if (scheme.spinCount > options.maxSpinCount)
    throw new WorkbookLimitError(
      `password key derivation spinCount ${scheme.spinCount} is over the limit of ${options.maxSpinCount}`,
    );
  if (password === undefined || password === '' || password.length > MAX_PASSWORD_LENGTH)
    throw workbookErrors.password(name);
  const estimate = estimateDerivationMs(scheme, options.hashRates);
  if (estimate > options.budgetMs)
    throw new WorkbookLimitError(
      `password key derivation (spinCount ${scheme.spinCount}) would take about ${Math.round(estimate / 1000)} s`,
    );
  let plain: Buffer;
  try {
    plain = await officeCrypto.decrypt(file, { password });
  } catch (error) {
    if (error instanceof Error && error.message === 'The password is incorrect')
      throw workbookErrors.password(name);
    throw new WorkbookFormatError('the encrypted package cannot be decrypted');
  }
  return plain;
}
