import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which network addresses a callback may reach (CONTRACT §5). Link-local, metadata, multicast and
 * similar addresses are never allowed; loopback, private, shared and other special-purpose ranges
 * only when ALLOW_PRIVATE_CALLBACKS=true. Checked on the address a connection is about to use, so a
 * DNS name that resolves inward is refused as well.
 *
 * Ranges are named by ipaddr.js's `range()`; the tables below say what each name means here. A name
 * they do not list (a newer ipaddr.js) is refused always until it is placed in them deliberately.
 * IPv6 forms that carry an IPv4 address are judged by that address (`embeddedIpv4`).
 */

/** never: refused always; private: refused unless ALLOW_PRIVATE_CALLBACKS; public: allowed. */
type Standing = "never" | "private" | "public";
type Judgement = { standing: Standing; what: string };

const IPV4: Readonly<Record<string, Judgement>> = {
  unicast: { standing: "public", what: "a public address" },
  as112: { standing: "public", what: "a public address (AS112)" },
  amt: { standing: "public", what: "a public address (AMT relay)" },
  unspecified: { standing: "never", what: 'a "this network" address (0.0.0.0/8)' },
  broadcast: { standing: "never", what: "the broadcast address" },
  multicast: { standing: "never", what: "a multicast address" },
  linkLocal: { standing: "never", what: "a link-local address (where cloud metadata lives)" },
  loopback: { standing: "private", what: "a loopback address" },
  private: { standing: "private", what: "a private (RFC 1918) address" },
  carrierGradeNat: { standing: "private", what: "a shared (carrier-grade NAT) address" },
  reserved: { standing: "private", what: "a reserved or special-purpose address" },
};

const IPV6: Readonly<Record<string, Judgement>> = {
  unicast: { standing: "public", what: "a public address" },
  as112v6: { standing: "public", what: "a public address (AS112)" },
  amt: { standing: "public", what: "a public address (AMT relay)" },
  unspecified: { standing: "never", what: "the unspecified address" },
  linkLocal: { standing: "never", what: "a link-local address" },
  multicast: { standing: "never", what: "a multicast address" },
  // Teredo reaches its client through a relay and a NAT that the network picks, not the address:
  // what a connection would reach cannot be checked, and no receiver needs it (Teredo is retired).
  teredo: { standing: "never", what: "a Teredo address, whose destination cannot be checked" },
  loopback: { standing: "private", what: "a loopback address" },
  uniqueLocal: { standing: "private", what: "a unique-local address" },
  deprecatedSiteLocal: { standing: "private", what: "a site-local address" },
  discard: { standing: "private", what: "a discard-only address" },
  benchmarking: { standing: "private", what: "a benchmarking address" },
  segmentRouting: { standing: "private", what: "a segment-routing (SRv6) address" },
  deprecatedOrchid: { standing: "private", what: "an ORCHID (not routable)" },
  orchid2: { standing: "private", what: "an ORCHID (not routable)" },
  droneRemoteIdProtocolEntityTags: { standing: "private", what: "a DRIP entity tag (not routable)" },
  reserved: { standing: "private", what: "a reserved or documentation address" },
};

/** Refused always, whatever their range says. */
const ALWAYS_REFUSED: ReadonlyArray<{ block: [ipaddr.IPv4 | ipaddr.IPv6, number]; what: string }> = [
  { block: ipaddr.parseCIDR("100.100.100.200/32"), what: "a cloud metadata address (Alibaba Cloud)" },
  { block: ipaddr.parseCIDR("fd00:ec2::254/128"), what: "a cloud metadata address (AWS over IPv6)" },
  { block: ipaddr.parseCIDR("168.63.129.16/32"), what: "a cloud platform address (Azure's wire server)" },
  { block: ipaddr.parseCIDR("192.0.0.192/32"), what: "a cloud metadata address (Oracle Cloud)" },
  { block: ipaddr.parseCIDR("240.0.0.0/4"), what: "a reserved address (240.0.0.0/4)" },
];

function alwaysRefused(ip: ipaddr.IPv4 | ipaddr.IPv6): Judgement | undefined {
  const found = ALWAYS_REFUSED.find(({ block }) => block[0].kind() === ip.kind() && ip.match(block));
  return found && { standing: "never", what: found.what };
}

function judgeIpv4(ip: ipaddr.IPv4): Judgement {
  const range = ip.range();
  return alwaysRefused(ip) ?? IPV4[range] ?? { standing: "never", what: `an unclassified address (${range})` };
}

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);

/**
 * The IPv4 address an IPv6 address stands for, named with its form; "unknown" when the form holds
 * one but not at a place that can be told. IPv4-compatible `::a.b.c.d` (deprecated, ::/96) is
 * `unicast` to ipaddr.js and is recognised here by its 96 leading zero bits.
 */
function embeddedIpv4(ip: ipaddr.IPv6, range: string): { ipv4: ipaddr.IPv4; form: string } | "unknown" | undefined {
  const [p0, p1, p2, p3, p4, p5, p6, p7] = ip.parts as [number, number, number, number, number, number, number, number];
  switch (range) {
    case "ipv4Mapped": // ::ffff:0:0/96
      return { ipv4: ipv4Of(p6, p7), form: "IPv4-mapped" };
    case "rfc6145": // ::ffff:0:0:0/96
      return { ipv4: ipv4Of(p6, p7), form: "IPv4-translated" };
    case "6to4": // 2002::/16, the IPv4 address in bits 16–47
      return { ipv4: ipv4Of(p1, p2), form: "6to4" };
    case "rfc6052":
      // 64:ff9b::/96 holds it in the last 32 bits. The local-use 64:ff9b:1::/48 leaves the layout
      // to the network (RFC 6052: a /48, /56, /64 or /96 prefix). With bits 48–95 zero, every
      // layout but /96 would translate to an address in 0.0.0.0/8, so the last 32 bits are it;
      // otherwise the address cannot be located.
      if (p2 === 0 || (p3 === 0 && p4 === 0 && p5 === 0)) return { ipv4: ipv4Of(p6, p7), form: "NAT64" };
      return "unknown";
    case "unicast":
      return p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0
        ? { ipv4: ipv4Of(p6, p7), form: "IPv4-compatible" }
        : undefined;
    default:
      return undefined;
  }
}

function judgeIpv6(ip: ipaddr.IPv6): Judgement & { embedded?: string } {
  const refused = alwaysRefused(ip);
  if (refused) return refused;
  const range = ip.range();
  const embedded = embeddedIpv4(ip, range);
  if (embedded === "unknown") {
    return { standing: "never", what: "a local-use NAT64 address whose IPv4 address cannot be located" };
  }
  if (embedded) return { ...judgeIpv4(embedded.ipv4), embedded: `${embedded.ipv4.toString()} (${embedded.form})` };
  return IPV6[range] ?? { standing: "never", what: `an unclassified address (${range})` };
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

export function checkAddress(address: string, allowPrivate: boolean): AddressVerdict {
  const plain = address.replace(/^\[|\]$/g, "");
  // node's parser decides what is an address: ipaddr.js also reads shorthands ("127.1") that
  // neither a lookup nor the URL parser hands over.
  if (isIP(plain) === 0) return { allowed: false, reason: `"${address}" is not an IP address` };
  const ip = ipaddr.parse(plain);
  const judged: Judgement & { embedded?: string } =
    ip.kind() === "ipv4" ? judgeIpv4(ip as ipaddr.IPv4) : judgeIpv6(ip as ipaddr.IPv6);
  if (judged.standing === "public" || (judged.standing === "private" && allowPrivate)) return { allowed: true };
  const subject = judged.embedded ? `${plain} embeds ${judged.embedded}, which` : plain;
  const unless = judged.standing === "private" ? " (ALLOW_PRIVATE_CALLBACKS is off)" : "";
  return { allowed: false, reason: `${subject} is ${judged.what}${unless}` };
}
