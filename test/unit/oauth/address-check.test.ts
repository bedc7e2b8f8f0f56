// The address check of Client ID Metadata Document fetches (src/oauth/address-check.ts): a pure
// function of the address, so every range is covered here without opening a socket.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAddress } from '../../../src/oauth/address-check.ts';

const strict = { allowLoopback: false };

describe('checkAddress', () => {
  test('refuses private, link-local, carrier-grade NAT, reserved and multicast IPv4 addresses', () => {
    for (const address of [
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '192.0.2.10',
    ]) {
      assert.equal(checkAddress(address, strict).ok, false, address);
    }
  });

  test('refuses unique-local, link-local, unspecified and multicast IPv6 addresses', () => {
    for (const address of ['fd00::1', 'fc12:3456::1', 'fe80::1', '::', 'ff02::1', '2001:db8::1']) {
      assert.equal(checkAddress(address, strict).ok, false, address);
    }
  });

  test('refuses an IPv4 range reached through an IPv4-mapped or NAT64 IPv6 address', () => {
    for (const address of [
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '::ffff:127.0.0.1',
      '64:ff9b::192.168.0.1',
    ]) {
      assert.equal(checkAddress(address, strict).ok, false, address);
    }
  });

  test('refuses loopback unless allowed, and then allows loopback only', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1']) {
      assert.deepEqual(checkAddress(address, strict), {
        ok: false,
        reason: `${address} is a loopback address`,
      });
      assert.deepEqual(checkAddress(address, { allowLoopback: true }), { ok: true });
    }
    assert.equal(checkAddress('10.0.0.1', { allowLoopback: true }).ok, false);
  });

  test('allows public unicast addresses of both families', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      assert.deepEqual(checkAddress(address, strict), { ok: true }, address);
    }
  });

  test('refuses what is not an IP address', () => {
    assert.equal(checkAddress('example.com', strict).ok, false);
  });
});
