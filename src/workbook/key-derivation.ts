/**
 * The cost of an encrypted workbook's password key derivation (MS-OFFCRYPTO: `spinCount` rounds of
 * the file's hash), known before any round runs. The hash rate is measured once per process at
 * start-up, so the refusal of a file that cannot finish before the deadline does not depend on how
 * loaded the machine is at the moment of the read (measured per read, it varied 2× under load).
 */
import { createHash } from 'node:crypto';

export const HASH_ALGORITHMS = ['SHA1', 'SHA256', 'SHA384', 'SHA512'] as const;
export type HashAlgorithm = (typeof HASH_ALGORITHMS)[number];

/** Hash rounds per millisecond, per algorithm. */
export type HashRates = Readonly<Record<HashAlgorithm, number>>;

export type EncryptionScheme =
  | { kind: 'agile'; hashAlgorithm: HashAlgorithm; spinCount: number }
  | { kind: 'standard'; spinCount: number };

const SAMPLE_ROUNDS = 250;
const SAMPLES = 20;

/** One round as officecrypto-tool runs it: a fresh hash of the counter and the previous digest. */
function roundsPerMs(algorithm: HashAlgorithm): number {
  let best = 0;
  const counter = Buffer.alloc(4);
  for (let sample = 0; sample < SAMPLES; sample++) {
    let digest = Buffer.alloc(64);
    const started = performance.now();
    for (let i = 0; i < SAMPLE_ROUNDS; i++) {
      counter.writeUInt32LE(i, 0);
      digest = createHash(algorithm).update(counter).update(digest).digest();
    }
    // The fastest of many short samples is the one least disturbed by other work on the machine
    // (20 × 250 rounds spread 1.4× under load 17; 5 × 1000 spread 2.8×).
    best = Math.max(best, SAMPLE_ROUNDS / Math.max(performance.now() - started, 0.001));
  }
  return best;
}

let calibrated: HashRates | undefined;

/** This machine's hash rates, measured on the first call (a few tens of milliseconds) and kept. */
export function calibrateHashRates(): HashRates {
  calibrated ??= Object.fromEntries(
    HASH_ALGORITHMS.map((algorithm) => [algorithm, roundsPerMs(algorithm)]),
  ) as Record<HashAlgorithm, number>;
  return calibrated;
}

/** officecrypto-tool derives the key three times per successful agile decryption (two verifier keys, one package key). */
const AGILE_DERIVATIONS = 3;

/** Milliseconds the derivation takes at the calibrated rate, on an otherwise idle core. */
export function estimateDerivationMs(scheme: EncryptionScheme, rates: HashRates): number {
  if (scheme.kind === 'standard') return scheme.spinCount / rates.SHA1;
  return (scheme.spinCount * AGILE_DERIVATIONS) / rates[scheme.hashAlgorithm];
}
