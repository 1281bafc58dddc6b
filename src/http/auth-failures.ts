import ipaddr from "ipaddr.js";
import { AppError } from "../errors";
import { createTokenBuckets } from "./rate-limit";
import { createSharedBuckets } from "./shared-buckets";
import type { SharedLimitStore } from "./shared-limits";

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

/** What authentication needs of a budget of failed authentications per client address. */
export interface AuthFailureBudget {
  /** Spends one attempt of the address's budget, or throws (rejects with) RATE_LIMITED when none is left. */
  spend(address: string): void | Promise<void>;
  /** Gives back an attempt spent on a key that turned out valid. */
  refund(address: string): void;
}

/**
 * A budget of failed authentications (unknown, revoked or malformed keys) per client address, in
 * this process's memory: `perSecond` failures a second on average, `burst` at once; `perSecond` 0
 * turns it off. An unknown key costs a database read, and unknown keys are not remembered (a key
 * issued later must work at once), so this is what bounds the reads one address can cause.
 */
export function createAuthFailureBudget({
  perSecond,
  burst,
  now,
}: {
  perSecond: number;
  burst: number;
  now?: () => number;
}) {
  const buckets = createTokenBuckets({ perSecond, burst, maxNames: MAX_ADDRESSES, ...(now ? { now } : {}) });
  return {
    /** Spends one attempt of the address's budget, or throws RATE_LIMITED when none is left. */
    spend(address: string): void {
      refuseIfWaiting(buckets.take(budgetNameOf(address)), perSecond);
    },
    /** Gives back an attempt spent on a key that turned out valid. */
    refund(address: string): void {
      buckets.giveBack(budgetNameOf(address));
    },
    /** How many addresses have a budget kept (for tests of the bound). */
    addresses: buckets.size,
  };
}

/**
 * The same budget counted in Redis, one for every instance (shared-buckets.ts says how the bucket
 * becomes a window there); this instance's own buckets decide while Redis is unavailable.
 */
export function createSharedAuthFailureBudget({
  perSecond,
  burst,
  store,
}: {
  perSecond: number;
  burst: number;
  store: SharedLimitStore;
}): AuthFailureBudget {
  const buckets = createSharedBuckets({
    store,
    limit: "auth_failures",
    keyPrefix: "cgw:limits:auth-failures",
    perSecond,
    burst,
    local: createTokenBuckets({ perSecond, burst, maxNames: MAX_ADDRESSES }),
  });
  return {
    spend: async (address) => refuseIfWaiting(await buckets.take(budgetNameOf(address)), perSecond),
    refund: (address) => buckets.giveBack(budgetNameOf(address)),
  };
}

function refuseIfWaiting(retryAfterSeconds: number, perSecond: number): void {
  if (retryAfterSeconds > 0) {
    throw new AppError(
      "RATE_LIMITED",
      `Too many failed authentications from this address (at most ${perSecond} a second); retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  }
}
