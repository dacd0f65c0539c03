/**
 * Which network addresses a destination may connect to (`docs/egress.md`). A pure decision over one
 * address: the guard (`egress-guard.ts`) resolves names and asks this for every address it found.
 *
 * Tenants choose webhook URLs and warehouse connection strings, so without a policy any tenant could
 * make the router call the cloud's metadata service, or the instance's own NATS, event store and
 * database. Ranges are matched with Node's `net.BlockList`, never by hand-parsing addresses.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';

/**
 * `open`: loopback and private networks are reachable (one team running Tributary for itself);
 * `public`: only public addresses, plus what the allow-list names (an instance shared by tenants).
 */
export type EgressMode = 'open' | 'public';

export const EGRESS_MODES: readonly EgressMode[] = ['open', 'public'];

export interface EgressPolicy {
  readonly mode: EgressMode;
  /** Host names (lower case, exact) reachable whatever they resolve to, except the always-refused ranges. */
  readonly allowedHostNames: ReadonlySet<string>;
  /** Addresses reachable under `public` (CIDRs and single addresses from `TRIBUTARY_EGRESS_ALLOW`). */
  readonly allowedAddresses: BlockList;
}

export type EgressDecision =
  | { readonly allowed: true; readonly internal: boolean }
  | { readonly allowed: false; readonly reason: string };

interface NamedRange {
  readonly cidr: string;
  readonly name: string;
}

/**
 * Never reachable, whatever the mode or the allow-list: the metadata services of cloud providers live
 * on link-local addresses (169.254.169.254, fd00:ec2::254), `0.0.0.0` and `::` reach the local host on
 * Linux, and multicast and broadcast are not a single receiver.
 */
const ALWAYS_REFUSED: readonly NamedRange[] = [
  { cidr: '0.0.0.0/8', name: 'the "this network" range 0.0.0.0/8' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata) 169.254.0.0/16' },
  // Inside carrier-grade NAT, so otherwise refused only under `public`.
  { cidr: '100.100.100.200/32', name: 'the Alibaba Cloud metadata address 100.100.100.200' },
  { cidr: '224.0.0.0/4', name: 'multicast 224.0.0.0/4' },
  { cidr: '255.255.255.255/32', name: 'broadcast 255.255.255.255' },
  { cidr: '::/128', name: 'the unspecified address ::' },
  { cidr: 'fe80::/10', name: 'link-local fe80::/10' },
  { cidr: 'fd00:ec2::254/128', name: 'the AWS metadata address fd00:ec2::254' },
  { cidr: 'ff00::/8', name: 'multicast ff00::/8' },
];

/**
 * IPv6 forms that tunnel to an IPv4 address in some other position than the last 32 bits, or through
 * a translator the operator runs: local-use NAT64 (RFC 8215), 6to4 and Teredo. Which IPv4 address a
 * packet ends up at depends on the network, so they count as internal (refused under `public`), and
 * each IPv4 address they may carry is checked against the always-refused ranges as well.
 */
const TUNNEL_RANGES: readonly NamedRange[] = [
  { cidr: '64:ff9b:1::/48', name: 'local-use NAT64 64:ff9b:1::/48' },
  { cidr: '2002::/16', name: '6to4 2002::/16' },
  { cidr: '2001::/32', name: 'Teredo 2001::/32' },
];

/** Refused under `public` unless allowed: the instance itself and the networks it sits in. */
const INTERNAL: readonly NamedRange[] = [
  { cidr: '127.0.0.0/8', name: 'loopback 127.0.0.0/8' },
  { cidr: '10.0.0.0/8', name: 'private 10.0.0.0/8' },
  { cidr: '172.16.0.0/12', name: 'private 172.16.0.0/12' },
  { cidr: '192.168.0.0/16', name: 'private 192.168.0.0/16' },
  { cidr: '100.64.0.0/10', name: 'carrier-grade NAT 100.64.0.0/10' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments 192.0.0.0/24' },
  { cidr: '198.18.0.0/15', name: 'benchmarking 198.18.0.0/15' },
  { cidr: '240.0.0.0/4', name: 'reserved 240.0.0.0/4' },
  { cidr: '::1/128', name: 'loopback ::1' },
  { cidr: 'fc00::/7', name: 'unique local fc00::/7' },
  { cidr: 'fec0::/10', name: 'site-local fec0::/10' },
  ...TUNNEL_RANGES,
];

/** IPv6 forms that carry an IPv4 address the packet ends up at; that address decides. */
const EMBEDDED_IPV4_PREFIXES: readonly { readonly cidr: string }[] = [
  { cidr: '::ffff:0:0/96' }, // IPv4-mapped
  { cidr: '64:ff9b::/96' }, // NAT64 well-known prefix
  { cidr: '::/96' }, // IPv4-compatible (deprecated, still routed by some stacks)
];

const alwaysRefused = rangeLists(ALWAYS_REFUSED);
const internal = rangeLists(INTERNAL);
/** Each category in one list, so the common answer (allowed) costs one check per category. */
const anyAlwaysRefused = combinedList(ALWAYS_REFUSED);
const anyInternal = combinedList(INTERNAL);
const embeddedIpv4 = new BlockList();
for (const { cidr } of EMBEDDED_IPV4_PREFIXES) addCidr(embeddedIpv4, cidr);

/** The default policy: `open`, nothing extra allowed. */
export const OPEN_EGRESS_POLICY: EgressPolicy = Object.freeze({
  mode: 'open' as const,
  allowedHostNames: new Set<string>(),
  allowedAddresses: new BlockList(),
});

/**
 * The policy of `TRIBUTARY_EGRESS` and `TRIBUTARY_EGRESS_ALLOW` (comma-separated host names, addresses
 * and CIDRs). Throws with a message naming the bad entry, so a typo stops the process at start.
 */
export function parseEgressPolicy(mode: string | undefined, allowList: string | undefined): EgressPolicy {
  const chosenMode = (mode ?? '').trim().toLowerCase() || 'open';
  if (!EGRESS_MODES.includes(chosenMode as EgressMode)) {
    throw new Error(`TRIBUTARY_EGRESS must be one of ${EGRESS_MODES.join(', ')}, got "${mode}"`);
  }
  const allowedHostNames = new Set<string>();
  const allowedAddresses = new BlockList();
  for (const rawEntry of (allowList ?? '').split(',')) {
    const entry = rawEntry.trim();
    if (entry === '') continue;
    const problem = addAllowEntry(entry, allowedHostNames, allowedAddresses);
    if (problem) throw new Error(`TRIBUTARY_EGRESS_ALLOW: "${entry}" ${problem}`);
  }
  return { mode: chosenMode as EgressMode, allowedHostNames, allowedAddresses };
}

/**
 * May a connection to `address` (an IP literal) go ahead? `hostName` is the name it was resolved from,
 * if any: a host named in the allow-list reaches its addresses under `public`. `internal` on an allowed
 * decision says the address is loopback or private and not vouched for by the allow-list: what such a
 * target answers is not shown to tenants, since it may be one of the operator's own services.
 */
export function decideEgress(policy: EgressPolicy, address: string, hostName?: string): EgressDecision {
  const family = isIP(address);
  if (family === 0) return { allowed: false, reason: `"${address}" is not an IP address` };
  const effective = effectiveAddress(address, family);

  if (anyAlwaysRefused.check(effective.address, effective.type)) {
    return { allowed: false, reason: `${address} is in ${rangeOf(alwaysRefused, effective)!.name}` };
  }
  for (const carried of tunnelledIpv4Of(effective)) {
    if (anyAlwaysRefused.check(carried, 'ipv4')) {
      const range = rangeOf(alwaysRefused, { address: carried, type: 'ipv4' })!;
      return { allowed: false, reason: `${address} tunnels to ${carried}, in ${range.name}` };
    }
  }
  if (!anyInternal.check(effective.address, effective.type)) return { allowed: true, internal: false };
  const allowListed =
    (hostName !== undefined && policy.allowedHostNames.has(normalizeHostName(hostName))) ||
    policy.allowedAddresses.check(effective.address, effective.type);
  if (allowListed) return { allowed: true, internal: false };
  if (policy.mode === 'open') return { allowed: true, internal: true };
  return {
    allowed: false,
    reason: `${address} is in ${rangeOf(internal, effective)!.name}, refused by TRIBUTARY_EGRESS=public`,
  };
}

/** Lower case, without the trailing dot of a fully qualified name and without IPv6 brackets. */
export function normalizeHostName(hostName: string): string {
  let name = hostName.trim().toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  if (name.endsWith('.')) name = name.slice(0, -1);
  return name;
}

interface EffectiveAddress {
  readonly address: string;
  readonly type: 'ipv4' | 'ipv6';
}

/** An IPv6 address that embeds an IPv4 one (mapped, NAT64, compatible) is judged as that IPv4 address. */
function effectiveAddress(address: string, family: number): EffectiveAddress {
  if (family === 4) return { address, type: 'ipv4' };
  if (address !== '::' && address !== '::1' && embeddedIpv4.check(address, 'ipv6')) {
    const ipv4 = embeddedIpv4Of(address);
    if (ipv4 !== undefined) return { address: ipv4, type: 'ipv4' };
  }
  return { address, type: 'ipv6' };
}

const localNat64 = new BlockList();
addCidr(localNat64, '64:ff9b:1::/48');
const sixToFour = new BlockList();
addCidr(sixToFour, '2002::/16');
const teredo = new BlockList();
addCidr(teredo, '2001::/32');

/**
 * The IPv4 addresses a tunnelling IPv6 address may deliver to: local-use NAT64's last 32 bits (the
 * /96 form), 6to4's bits 16-47, Teredo's server (bits 32-63) and its client (the last 32 bits,
 * complemented).
 */
function tunnelledIpv4Of(effective: EffectiveAddress): string[] {
  if (effective.type !== 'ipv6') return [];
  const { address } = effective;
  const forms = {
    localNat64: localNat64.check(address, 'ipv6'),
    sixToFour: sixToFour.check(address, 'ipv6'),
    teredo: teredo.check(address, 'ipv6'),
  };
  if (!forms.localNat64 && !forms.sixToFour && !forms.teredo) return [];
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  let written = address;
  // A dotted IPv4 tail (`64:ff9b:1::1.2.3.4`) stands for the last two groups.
  if (isIPv4(tail)) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    written = `${address.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = expandIpv6(written);
  if (groups === undefined) return [];
  const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  if (forms.localNat64) return [dotted(groups[6]!, groups[7]!)];
  if (forms.sixToFour) return [dotted(groups[1]!, groups[2]!)];
  return [dotted(groups[2]!, groups[3]!), dotted(~groups[6]! & 0xffff, ~groups[7]! & 0xffff)];
}

/** The last 32 bits of an IPv6 address, as dotted IPv4. */
function embeddedIpv4Of(address: string): string | undefined {
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  if (isIPv4(tail)) return tail;
  const groups = expandIpv6(address);
  if (groups === undefined) return undefined;
  const high = groups[6]!;
  const low = groups[7]!;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of an IPv6 address without an embedded dotted IPv4 tail. */
function expandIpv6(address: string): number[] | undefined {
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1]!.split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array.from({ length: missing }, () => '0'), ...tail].map((group) =>
    Number.parseInt(group, 16),
  );
  return groups.some((group) => Number.isNaN(group)) ? undefined : groups;
}

function rangeLists(ranges: readonly NamedRange[]): { range: NamedRange; list: BlockList }[] {
  return ranges.map((range) => {
    const list = new BlockList();
    addCidr(list, range.cidr);
    return { range, list };
  });
}

function combinedList(ranges: readonly NamedRange[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) addCidr(list, range.cidr);
  return list;
}

function rangeOf(
  lists: readonly { range: NamedRange; list: BlockList }[],
  effective: EffectiveAddress,
): NamedRange | undefined {
  return lists.find(({ list }) => list.check(effective.address, effective.type))?.range;
}

function addCidr(list: BlockList, cidr: string): void {
  const [network, prefix] = cidr.split('/');
  const type = isIP(network!) === 4 ? 'ipv4' : 'ipv6';
  list.addSubnet(network!, Number(prefix), type);
}

/** One dot-separated label of a DNS name (underscores too: compose service names may hold them). */
const HOST_NAME_LABEL = /^[a-z0-9_][a-z0-9_-]{0,62}$/;

/** Adds one allow-list entry; answers what is wrong with it, if anything. */
function addAllowEntry(entry: string, hostNames: Set<string>, addresses: BlockList): string | undefined {
  const slash = entry.indexOf('/');
  if (slash >= 0) {
    const network = normalizeHostName(entry.slice(0, slash));
    const prefixText = entry.slice(slash + 1);
    const family = isIP(network);
    const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
    if (family === 0) return 'is not a CIDR: the part before "/" is not an IP address';
    if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) return 'has an invalid prefix length';
    addresses.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return undefined;
  }
  const name = normalizeHostName(entry);
  const family = isIP(name);
  if (family !== 0) {
    addresses.addAddress(name, family === 4 ? 'ipv4' : 'ipv6');
    return undefined;
  }
  const labels = name.split('.');
  if (name.length > 253 || !labels.every((label) => HOST_NAME_LABEL.test(label))) {
    return 'is neither a host name, an IP address nor a CIDR';
  }
  hostNames.add(name);
  return undefined;
}
