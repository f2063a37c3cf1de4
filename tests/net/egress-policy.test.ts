import { describe, expect, test } from 'bun:test';
import { CidrList, internalRange, parseAddress } from '../../src/net/address-ranges';
import { EgressBlockedError, EgressPolicy, parseAllowlist } from '../../src/net/egress-policy';

const resolver = (answers: Record<string, string[]>) => ({ resolve: async (host: string) => answers[host] ?? [] });

describe('address ranges', () => {
  test('internal in every family and spelling, public unicast not', () => {
    const internal = ['127.0.0.1', '2130706433', '0x7f000001', '0177.0.0.1', '127.1', '10.0.0.1', '172.31.255.255', '192.168.0.1', '100.64.0.1',
      '169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', '::ffff:127.0.0.1', '::ffff:a00:1', 'fd00::1', 'fe80::1',
      'ff02::1', '64:ff9b::a00:1', '2002:7f00:1::', 'fd00:ec2::254'];
    expect(internal.filter((a) => internalRange(parseAddress(a)!) === undefined)).toEqual([]);
    expect(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'].map((a) => internalRange(parseAddress(a)!))).toEqual([
      undefined, undefined, undefined, undefined, undefined,
    ]);
  });

  test('CIDR lists match both families, an IPv4-mapped address as its IPv4 address', () => {
    const list = new CidrList(['10.1.0.0/16', '127.0.0.1', 'fd00::/8']);
    expect(['10.1.2.3', '127.0.0.1', '::ffff:127.0.0.1', 'fd12::1'].map((a) => list.contains(parseAddress(a)!))).toEqual([true, true, true, true]);
    expect(['10.2.0.1', '127.0.0.2', 'fe80::1'].map((a) => list.contains(parseAddress(a)!))).toEqual([false, false, false]);
    expect(() => new CidrList(['10.0.0.0/33'])).toThrow('is not a CIDR range');
    expect(() => new CidrList(['nope'])).toThrow('is not an IP address or CIDR range');
  });
});

describe('the egress policy', () => {
  test('the allowlist takes CIDR ranges, addresses and host names, and refuses anything else by name', () => {
    const allow = parseAllowlist(' 10.0.0.0/8, hooks.internal ,*.corp.example, ::1 ');
    expect(allow.names).toEqual(['hooks.internal', '*.corp.example']);
    expect(allow.addresses.size).toBe(2);
    expect(() => parseAllowlist('hooks.internal,bad name')).toThrow('"bad name" is neither a CIDR range, an IP address nor a host name');
    expect(() => parseAllowlist('10.0.0.0/40')).toThrow('"10.0.0.0/40" is not a CIDR range');
  });

  test('an allowlisted range, name or subdomain opens what would be refused', async () => {
    const policy = new EgressPolicy(parseAllowlist('10.0.0.0/8,*.corp.example'), resolver({ 'a.corp.example': ['192.168.1.1'], 'x.example': ['10.9.9.9'], 'y.example': ['192.168.1.1'] }));
    expect(await policy.refusal(new URL('http://10.1.1.1/'))).toBeUndefined();
    expect(await policy.refusal(new URL('http://a.corp.example/'))).toBeUndefined();
    expect(await policy.refusal(new URL('http://x.example/'))).toBeUndefined();
    expect(await policy.refusal(new URL('http://y.example/'))).toBe(
      "y.example resolves to 192.168.1.1, a private address: internal addresses are refused unless the service's EGRESS_ALLOWLIST setting lists them",
    );
    expect(await policy.refusal(new URL('http://corp.example/'))).toBeUndefined();
  });

  test('a name that does not resolve at registration is left to the check at connect time', async () => {
    expect(await new EgressPolicy(parseAllowlist(''), { resolve: () => Promise.reject(new Error('ENOTFOUND')) }).refusal(new URL('https://later.example/'))).toBeUndefined();
  });

  test('the lookup refuses a name when any of its addresses is internal, and answers them all otherwise', async () => {
    const policy = new EgressPolicy(parseAllowlist(''), resolver({ 'mixed.example': ['93.184.216.34', '127.0.0.1'], 'ok.example': ['93.184.216.34', '2606:4700::1111'] }));
    const lookup = (host: string) =>
      new Promise((resolve) => policy.lookup(host, { all: true }, (err, addresses) => resolve(err ?? addresses)));
    const refused = await lookup('mixed.example');
    expect(refused).toBeInstanceOf(EgressBlockedError);
    expect((refused as Error).message).toBe('blocked address: mixed.example resolves to 127.0.0.1, a loopback address');
    expect(await lookup('ok.example')).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1111', family: 6 }]);
    expect(await lookup('localhost')).toBeInstanceOf(EgressBlockedError);
  });
});
