import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** "http://<address>:<port>" of a listening server; throws before it listens. */
export function listeningUrl(server: Server): string {
  const address: AddressInfo | string | null = server.address();
  if (!address || typeof address === "string") throw new Error("The server is not listening");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
