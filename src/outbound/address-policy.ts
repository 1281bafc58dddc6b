import { BlockList, isIP } from "node:net";

/**
 * Which network addresses a callback may reach (CONTRACT §5). Link-local and cloud metadata addresses
 * are never allowed; loopback, private, shared and other special-purpose ranges only when
 * ALLOW_PRIVATE_CALLBACKS=true. Checked on the address a connection is about to use, so a DNS name
 * that resolves inward is refused as well.
 */
const NEVER = new BlockList();
NEVER.addSubnet("169.254.0.0", 16, "ipv4"); // link-local, including 169.254.169.254 (metadata)
NEVER.addSubnet("fe80::", 10, "ipv6"); // link-local
NEVER.addAddress("fd00:ec2::254", "ipv6"); // AWS metadata over IPv6
NEVER.addAddress("100.100.100.200", "ipv4"); // Alibaba Cloud metadata
NEVER.addSubnet("0.0.0.0", 8, "ipv4"); // "this network"; 0.0.0.0 reaches the local host
NEVER.addAddress("::", "ipv6");
NEVER.addSubnet("224.0.0.0", 4, "ipv4"); // multicast
NEVER.addSubnet("ff00::", 8, "ipv6");
NEVER.addSubnet("240.0.0.0", 4, "ipv4"); // reserved and broadcast

const PRIVATE = new BlockList();
PRIVATE.addSubnet("127.0.0.0", 8, "ipv4");
PRIVATE.addAddress("::1", "ipv6");
PRIVATE.addSubnet("10.0.0.0", 8, "ipv4");
PRIVATE.addSubnet("172.16.0.0", 12, "ipv4");
PRIVATE.addSubnet("192.168.0.0", 16, "ipv4");
PRIVATE.addSubnet("100.64.0.0", 10, "ipv4"); // shared address space (carrier-grade NAT)
PRIVATE.addSubnet("198.18.0.0", 15, "ipv4"); // benchmarking
PRIVATE.addSubnet("192.0.0.0", 24, "ipv4"); // IETF protocol assignments
PRIVATE.addSubnet("fc00::", 7, "ipv6"); // unique local

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** "::ffff:127.0.0.1" and "::ffff:7f00:1" are IPv4 addresses in IPv6 clothing. */
function unwrapMappedIpv4(address: string): string {
  const lower = address.toLowerCase();
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return address;
}

export function checkAddress(address: string, allowPrivate: boolean): AddressVerdict {
  const plain = unwrapMappedIpv4(address.replace(/^\[|\]$/g, ""));
  const family = isIP(plain);
  if (family === 0) return { allowed: false, reason: `"${address}" is not an IP address` };
  const type = family === 4 ? "ipv4" : "ipv6";
  if (NEVER.check(plain, type))
    return { allowed: false, reason: `${plain} is a link-local, metadata or reserved address` };
  if (!allowPrivate && PRIVATE.check(plain, type))
    return { allowed: false, reason: `${plain} is a loopback or private address (ALLOW_PRIVATE_CALLBACKS is off)` };
  return { allowed: true };
}
