import { decideEgress, parseEgressPolicy, type EgressPolicy } from './egress-policy';

const open = parseEgressPolicy('open', undefined);
const publicOnly = parseEgressPolicy('public', undefined);

const allowed = (policy: EgressPolicy, address: string, hostName?: string) =>
  decideEgress(policy, address, hostName).allowed;

describe('decideEgress', () => {
  // One address at each edge of every range, and its IPv4-mapped IPv6 forms.
  const alwaysRefused = [
    '169.254.0.0',
    '169.254.169.254',
    '169.254.255.255',
    'fe80::1',
    'febf:ffff::1',
    'fd00:ec2::254',
    '0.0.0.0',
    '0.255.255.255',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    'ff02::1',
    'ff0e::1',
    '::',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::FFFF:A9FE:A9FE',
    '::ffff:0.0.0.0',
    '::ffff:224.0.0.1',
    '64:ff9b::169.254.169.254',
    '::169.254.169.254',
    // Alibaba Cloud's metadata service sits inside carrier-grade NAT.
    '100.100.100.200',
    '::ffff:100.100.100.200',
    // Tunnels to a metadata address: local-use NAT64, 6to4, Teredo's server and (complemented) client.
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1::169.254.169.254',
    '2002:a9fe:a9fe::1',
    '2001:0:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:5601:5601',
  ];

  it.each(alwaysRefused)('refuses %s under open and public, even when allow-listed', (address) => {
    const allowEverything = parseEgressPolicy('public', '0.0.0.0/0,::/0');
    expect(allowed(open, address)).toBe(false);
    expect(allowed(publicOnly, address)).toBe(false);
    expect(allowed(allowEverything, address)).toBe(false);
    const decision = decideEgress(open, address);
    expect(decision.allowed === false && decision.reason).toContain(address);
  });

  const internal = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['192.168.255.255', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:192.168.1.1', 'private'],
    ['::ffff:100.64.0.1', 'carrier-grade NAT'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['2002:808:808::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ] as const;

  it.each(internal)(
    'allows %s under open, marked internal; refuses it under public (%s)',
    (address, range) => {
      expect(decideEgress(open, address)).toEqual({ allowed: true, internal: true });
      const decision = decideEgress(publicOnly, address);
      expect(decision.allowed).toBe(false);
      expect(decision.allowed === false && decision.reason).toContain(range);
      expect(decision.allowed === false && decision.reason).toContain('TRIBUTARY_EGRESS=public');
    },
  );

  const publicAddresses = [
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '223.255.255.255',
    '1.0.0.0',
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    'fbff:ffff::1',
    'fe00::1',
  ];

  it.each(publicAddresses)('allows the public address %s under both modes', (address) => {
    expect(decideEgress(open, address)).toEqual({ allowed: true, internal: false });
    expect(decideEgress(publicOnly, address)).toEqual({ allowed: true, internal: false });
  });

  it('refuses anything that is not an IP address', () => {
    expect(allowed(open, 'example.com')).toBe(false);
    expect(allowed(open, '')).toBe(false);
  });

  describe('TRIBUTARY_EGRESS_ALLOW under public', () => {
    const policy = parseEgressPolicy(
      'public',
      ' postgres , 10.1.0.0/16, 192.168.7.7 ,fd00:1::/32,Warehouse.Internal.',
    );

    it('allows a named host whatever internal address it resolves to, not marked internal', () => {
      expect(decideEgress(policy, '172.18.0.5', 'postgres')).toEqual({ allowed: true, internal: false });
      expect(decideEgress(policy, '10.9.9.9', 'warehouse.internal')).toEqual({
        allowed: true,
        internal: false,
      });
      expect(decideEgress(policy, '10.9.9.9', 'WAREHOUSE.internal.')).toEqual({
        allowed: true,
        internal: false,
      });
      expect(allowed(policy, '172.18.0.5', 'postgres-2')).toBe(false);
      expect(allowed(policy, '172.18.0.5')).toBe(false);
    });

    it('allows addresses inside a listed CIDR or equal to a listed address, and nothing next to them', () => {
      expect(allowed(policy, '10.1.0.0')).toBe(true);
      expect(allowed(policy, '10.1.255.255')).toBe(true);
      expect(allowed(policy, '::ffff:10.1.2.3')).toBe(true);
      expect(allowed(policy, '10.2.0.0')).toBe(false);
      expect(allowed(policy, '192.168.7.7')).toBe(true);
      expect(allowed(policy, '192.168.7.8')).toBe(false);
      expect(allowed(policy, 'fd00:1:ffff::1')).toBe(true);
      expect(allowed(policy, 'fd00:2::1')).toBe(false);
    });

    it('never opens the always-refused ranges to a named host', () => {
      expect(allowed(policy, '169.254.169.254', 'postgres')).toBe(false);
      expect(allowed(policy, 'fd00:ec2::254', 'postgres')).toBe(false);
    });
  });

  it('treats allow-listed internal addresses under open as vouched for (their responses may be shown)', () => {
    const policy = parseEgressPolicy('open', '127.0.0.1');
    expect(decideEgress(policy, '127.0.0.1')).toEqual({ allowed: true, internal: false });
    expect(decideEgress(policy, '127.0.0.2')).toEqual({ allowed: true, internal: true });
  });
});

describe('parseEgressPolicy', () => {
  it('defaults to open with nothing extra allowed', () => {
    const policy = parseEgressPolicy(undefined, undefined);
    expect(policy.mode).toBe('open');
    expect(policy.allowedHostNames.size).toBe(0);
    expect(parseEgressPolicy('', '').mode).toBe('open');
    expect(parseEgressPolicy(' PUBLIC ', '').mode).toBe('public');
  });

  it('refuses an unknown mode, naming the variable', () => {
    expect(() => parseEgressPolicy('closed', undefined)).toThrow(
      /TRIBUTARY_EGRESS must be one of open, public/,
    );
  });

  it.each([
    ['10.0.0.0/33', 'invalid prefix length'],
    ['10.0.0.0/', 'invalid prefix length'],
    ['fd00::/129', 'invalid prefix length'],
    ['example.com/8', 'not a CIDR'],
    ['http://example.com', 'not a CIDR'],
    ['bad host', 'neither a host name'],
    ['a..b', 'neither a host name'],
  ])('refuses the allow-list entry %s, naming the variable and the entry', (entry, problem) => {
    expect(() => parseEgressPolicy('public', `postgres,${entry}`)).toThrow(
      new RegExp(`TRIBUTARY_EGRESS_ALLOW: "${entry.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" .*${problem}`),
    );
  });
});
