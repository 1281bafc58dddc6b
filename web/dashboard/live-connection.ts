import { createClient, type Client } from "graphql-ws";
import { bearer } from "../shared/api-key";
import { graphqlWebsocketUrl } from "../shared/gateway-url";

export type ConnectionState =
  | { kind: "no-key" }
  | { kind: "connecting" }
  | { kind: "connected" }
  | { kind: "reconnecting"; reason: string }
  | { kind: "refused"; reason: string };

/** Close codes the gateway uses for a key it will not accept (CONTRACT §5, errors table): retrying cannot help. */
const REFUSED = new Set([4401, 4403]);

function closeCode(event: unknown): { code: number; reason: string } | null {
  if (typeof event === "object" && event !== null && "code" in event) {
    const { code, reason } = event as { code: unknown; reason?: unknown };
    if (typeof code === "number") return { code, reason: typeof reason === "string" ? reason : "" };
  }
  return null;
}

/**
 * The graphql-ws connection of the dashboard: opened at once (so a wrong key shows immediately),
 * reconnecting with backoff after a network loss or restart, but not after the key is refused.
 */
export type LiveConnection = Pick<Client, "subscribe" | "dispose">;

export function openLiveConnection(key: string, onState: (state: ConnectionState) => void): LiveConnection {
  let disposed = false;
  const client = createClient({
    url: graphqlWebsocketUrl(),
    connectionParams: { authorization: bearer(key) },
    lazy: false,
    keepAlive: 15_000,
    retryAttempts: Number.POSITIVE_INFINITY,
    retryWait: (retries) =>
      new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * 2 ** retries) * (0.5 + Math.random() / 2))),
    shouldRetry: (event) => {
      const close = closeCode(event);
      return close === null || !REFUSED.has(close.code);
    },
    onNonLazyError: () => {
      /* reported through the closed event below */
    },
    on: {
      connecting: (isRetry) =>
        !disposed && onState(isRetry ? { kind: "reconnecting", reason: "reconnecting" } : { kind: "connecting" }),
      connected: () => !disposed && onState({ kind: "connected" }),
      closed: (event) => {
        if (disposed) return;
        const close = closeCode(event);
        if (close && REFUSED.has(close.code))
          onState({ kind: "refused", reason: close.reason || "The gateway refused the key" });
        else onState({ kind: "reconnecting", reason: close?.reason || "connection lost" });
      },
    },
  });
  return {
    subscribe: client.subscribe.bind(client),
    dispose() {
      disposed = true; // the close that follows is ours, not a lost connection
      return client.dispose();
    },
  };
}
