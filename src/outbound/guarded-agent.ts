import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent } from "undici";
import { causesOf } from "../domain/error-chain";
import { checkAddress } from "./address-policy";

/** Raised when a callback's address is one the service must not reach (SSRF defence). */
export class ForbiddenAddressError extends Error {
  readonly code = "ERR_FORBIDDEN_ADDRESS";
  constructor(reason: string) {
    super(reason);
    this.name = "ForbiddenAddressError";
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici Agent for calls to client callbacks. Every connection it opens first resolves the host
 * and refuses forbidden addresses, so the check applies to the address actually used, not only to
 * the URL as stored (a DNS name may resolve inward, and may change between checks).
 */
export function createGuardedAgent({
  allowPrivate,
  connections,
  keepAliveTimeoutMs = 30_000,
}: {
  allowPrivate: boolean;
  connections?: number;
  keepAliveTimeoutMs?: number;
}): Agent {
  const lookup = (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : "");
      for (const { address } of addresses) {
        const verdict = checkAddress(address, allowPrivate);
        if (!verdict.allowed)
          return callback(
            new ForbiddenAddressError(`${hostname} resolves to a forbidden address: ${verdict.reason}`),
            options.all ? [] : "",
          );
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
  return new Agent({
    connect: { lookup: lookup as never, timeout: 5_000 },
    keepAliveTimeout: keepAliveTimeoutMs,
    ...(connections === undefined ? {} : { connections }),
  });
}

/** IP literals are connected to without a lookup, so they are checked here before any request. */
export function assertHostAllowed(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) === 0) return;
  const verdict = checkAddress(host, allowPrivate);
  if (!verdict.allowed) throw new ForbiddenAddressError(verdict.reason);
}

/** The ForbiddenAddressError behind an undici failure, if that is what it was. */
export function forbiddenCause(error: unknown): ForbiddenAddressError | undefined {
  for (const e of causesOf(error, 5)) {
    if (e instanceof ForbiddenAddressError) return e;
    if (e.code === "ERR_FORBIDDEN_ADDRESS") return e as ForbiddenAddressError;
  }
  return undefined;
}
