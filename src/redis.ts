import type Redis from "ioredis";

/**
 * Disconnects `client` and resolves once it has ended (its socket closed): at most 3 s after asking,
 * ioredis destroying the socket by 2 s.
 */
export function disconnectRedis(client: Redis): Promise<void> {
  if (client.status === "end") return Promise.resolve();
  return new Promise<void>((resolve) => {
    const cap = setTimeout(resolve, 3_000);
    client.once("end", () => {
      clearTimeout(cap);
      resolve();
    });
    client.disconnect();
  });
}
