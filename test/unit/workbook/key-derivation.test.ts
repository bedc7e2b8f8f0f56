/** How long a workbook password's key derivation takes here: calibrated rates and the estimate from them. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  calibrateHashRates,
  estimateDerivationMs,
  HASH_ALGORITHMS,
  type HashRates,
} from '../../../src/workbook/key-derivation.ts';

test('calibration measures a positive rate per algorithm, once', () => {
  const rates = calibrateHashRates();
  for (const algorithm of HASH_ALGORITHMS) assert.ok(rates[algorithm] > 0, algorithm);
  assert.equal(calibrateHashRates(), rates);
});

test('agile encryption derives three keys at its hash rate; standard one at the SHA-1 rate', () => {
  const rates: HashRates = { SHA1: 1000, SHA256: 500, SHA384: 250, SHA512: 200 };
  assert.equal(
    estimateDerivationMs({ kind: 'agile', hashAlgorithm: 'SHA512', spinCount: 100_000 }, rates),
    1500,
  );
  assert.equal(
    estimateDerivationMs({ kind: 'agile', hashAlgorithm: 'SHA256', spinCount: 100_000 }, rates),
    600,
  );
  assert.equal(estimateDerivationMs({ kind: 'standard', spinCount: 50_000 }, rates), 50);
});
