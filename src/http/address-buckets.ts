import ipaddr from "ipaddr.js";
import { type BucketRate, createTokenBuckets, type SharedBucketRate } from "./rate-limit";
import { createSharedBuckets } from "./shared-buckets";
import type { LimitName } from "./shared-limits";

/** Client addresses whose budgets are kept; past it the least recently used is dropped. */
const MAX_ADDRESSES = 100_000;

/**
 * The name an address is budgeted under: an IPv4 address itself (also when it arrives IPv4-mapped,
 * as on a dual-stack listener); an IPv6 address by its /64, the block one host usually has, so that
 * stepping through the addresses of one's own network does not buy a fresh budget each time.
 */
export function budgetNameOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  if (ip.kind() === "ipv4") return ip.toString();
  const [a, b, c, d] = (ip as ipaddr.IPv6).parts;
  return `${[a, b, c, d].map((part) => part!.toString(16)).join(":")}::/64`;
}

/**
 * Token buckets per client address (by `budgetNameOf`), in this process's memory: `perSecond`
 * tokens a second on average, `burst` at once; `perSecond` 0 turns them off.
 */
export function createAddressBuckets({ perSecond, burst, now }: BucketRate) {
  const buckets = createTokenBuckets({ perSecond, burst, maxNames: MAX_ADDRESSES, now });
  return {
    /** Takes one token: 0 when taken, else the whole seconds (at least 1) until one is free. */
    take: (address: string) => buckets.take(budgetNameOf(address)),
    giveBack: (address: string) => buckets.giveBack(budgetNameOf(address)),
    /** How many addresses have a bucket kept (for tests of the bound). */
    size: buckets.size,
  };
}

/**
 * The same buckets counted in Redis under `keyPrefix`, one budget for every instance (shared-buckets.ts
 * says how the bucket becomes a window there); this instance's own buckets decide while Redis is
 * unavailable, counted as fallbacks of `limit`.
 */
export function createSharedAddressBuckets({
  perSecond,
  burst,
  store,
  limit,
  keyPrefix,
}: SharedBucketRate & { limit: LimitName; keyPrefix: string }) {
  const buckets = createSharedBuckets({
    store,
    limit,
    keyPrefix,
    perSecond,
    burst,
    local: createTokenBuckets({ perSecond, burst, maxNames: MAX_ADDRESSES }),
  });
  return {
    take: (address: string) => buckets.take(budgetNameOf(address)),
    giveBack: (address: string) => buckets.giveBack(budgetNameOf(address)),
  };
}
