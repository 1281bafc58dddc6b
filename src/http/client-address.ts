import type { IncomingMessage } from "node:http";
import proxyAddr from "@fastify/proxy-addr";

/** Whether the hop at `address` may be believed about the one before it (Fastify's `trustProxy` shape). */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * The client address of a request: the connection's peer, or with trusted proxies the nearest
 * X-Forwarded-For entry not added by one of them. HTTP (through Fastify's `request.ip`) and websocket
 * upgrades read it the same way, so the per-address budgets count the same clients on both.
 */
export interface ClientAddress {
  /** Fastify's `trustProxy`; undefined when no proxy is trusted. */
  trust: ProxyTrust | undefined;
  addressOf: (request: IncomingMessage) => string | undefined;
}

export function clientAddressReader(trusted: readonly string[]): ClientAddress {
  if (trusted.length === 0) return { trust: undefined, addressOf: (request) => request.socket.remoteAddress };
  const trust = proxyAddr.compile([...trusted]);
  return { trust, addressOf: (request) => proxyAddr(request, trust) };
}
