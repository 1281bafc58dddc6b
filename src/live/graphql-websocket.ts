import type { Server as HttpServer, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { CloseCode, handleProtocols } from "graphql-ws";
import { type WebSocket, WebSocketServer } from "ws";
import { AppError } from "../errors";
import { rawProblemResponse } from "../http/problem";
import type { ConnectionCap } from "./connection-cap";
import { newSocketState, type SocketState } from "./graphql-ws-protocol";
import { createGraphQLWsServer, type GraphQLWsServerOptions } from "./graphql-ws-server";
import { startKeepAlive } from "./keep-alive";
import { type KeyVerdict, startKeyRecheck } from "./key-recheck";
import { MAX_MESSAGE_BYTES, refuseMessage } from "./socket-limits";

export const GRAPHQL_PATH = "/graphql";
const CLOSE_GRACE_MS = 1_000;

export interface GraphQLWebsocket {
  /** Closes every socket (1001 going away) and stops accepting new ones. */
  dispose(): Promise<void>;
  /** Open sockets (after the HTTP upgrade). */
  socketCount: () => number;
  /** Live subscriptions (feeds) running. */
  subscriptionCount: () => number;
  /** Executions of live subscription operations so far: one per (event, operation), however many subscribers. */
  liveExecutions: () => number;
}

/**
 * GraphQL over websockets (the graphql-transport-ws protocol) at /graphql, on the HTTP server's
 * `upgrade` event next to Fastify and Apollo. This is the `ws` adapter of the protocol
 * (graphql-ws-protocol.ts, with the hooks of graphql-ws-server.ts), owned rather than taken from
 * `graphql-ws/use/ws` so that it can refuse
 * messages before the core sees them (socket-limits.ts), keep one keep-alive timer for all sockets
 * (keep-alive.ts), and let live feeds write their frames to the socket directly.
 */
export function attachGraphQLWebsocket(
  options: Omit<GraphQLWsServerOptions, "connections" | "maxSubscriptionsPerSocket"> & {
    httpServer: HttpServer;
    /** The client address of an upgrade request, as HTTP requests read it (http/client-address.ts). */
    addressOf: (request: IncomingMessage) => string | undefined;
    /**
     * The periodic re-check of a connected key (key-recheck.ts): `revoked` closes its sockets, anything
     * else keeps them. MUST NOT charge the key's rate limit, and a failure MUST NOT count as revoked.
     */
    recheck: (keyId: string) => Promise<"valid" | KeyVerdict>;
    /** How often the key behind every socket is looked up again. */
    recheckMs: number;
    /** How often every socket is pinged (keep-alive.ts). */
    keepAliveMs: number;
    /** Per key and per socket (docs/API.md "Limits"); over a limit the socket closes with 4429 or the operation gets RATE_LIMITED. */
    limits: {
      /** Open sockets per key (connection-cap.ts: this instance's, or shared through Redis). */
      connections: ConnectionCap;
      maxSubscriptionsPerSocket: number;
      /** Takes one of the key's rate-limit tokens for an incoming message; throws RATE_LIMITED when none is left. */
      takeMessageToken: (keyId: string) => void;
    };
  },
): GraphQLWebsocket {
  const { httpServer, addressOf, recheck, recheckMs, keepAliveMs, limits, log } = options;
  const server = createGraphQLWsServer({
    ...options,
    connections: limits.connections,
    maxSubscriptionsPerSocket: limits.maxSubscriptionsPerSocket,
  });
  const states = new Map<WebSocket, SocketState>();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    handleProtocols,
    clientTracking: true,
  });
  const keepAlive = startKeepAlive(keepAliveMs);
  const keyRecheck = startKeyRecheck({
    intervalMs: recheckMs,
    connected: function* () {
      for (const [socket, state] of states) if (state.keyId !== undefined) yield [socket, state.keyId] as const;
    },
    recheck,
    close: (socket, code, reason) => socket.close(code, reason),
    log,
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = (request.url ?? "").split("?")[0];
    if (pathname !== GRAPHQL_PATH) {
      socket.end(
        rawProblemResponse(new AppError("NOT_FOUND", `No websocket endpoint at ${pathname}; use ${GRAPHQL_PATH}`)),
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => onConnection(ws, addressOf(request)));
  };
  httpServer.on("upgrade", onUpgrade);

  // One set of listeners for every socket (`this` is the socket), so a socket holds no closures of its own.
  function onMessage(this: WebSocket, data: Buffer, isBinary: boolean): void {
    const state = states.get(this);
    if (!state) return;
    const text = isBinary ? "" : data.toString("utf8");
    const refusal = refuseMessage(text, state.keyId, limits.takeMessageToken);
    if (refusal) {
      this.close(refusal.code, refusal.reason);
      return;
    }
    server.protocol.message(this, state, text).catch((error: unknown) => {
      log.error({ err: error }, "websocket message handling failed");
      this.close(CloseCode.InternalServerError, "Internal server error");
    });
  }
  function onClose(this: WebSocket): void {
    const state = states.get(this);
    if (!state) return;
    states.delete(this);
    state.releaseSlot?.();
    server.protocol.closed(state);
  }
  function onError(error: Error): void {
    log.debug({ err: error }, "websocket error");
  }

  function onConnection(socket: WebSocket, address: string | undefined): void {
    const state = newSocketState(address);
    states.set(socket, state);
    keepAlive.watch(socket);
    socket.on("error", onError);
    socket.on("message", onMessage);
    socket.on("close", onClose);
    server.protocol.opened(socket, state);
  }

  return {
    socketCount: () => states.size,
    subscriptionCount: server.subscriptionCount,
    liveExecutions: server.liveExecutions,
    async dispose() {
      keepAlive.stop();
      keyRecheck.stop();
      // Clients reconnect at once when closed below, often on a kept-alive connection. Refuse those
      // upgrades and close their connections: left unanswered they would hold the server's close open.
      httpServer.off("upgrade", onUpgrade);
      httpServer.on("upgrade", (_request: IncomingMessage, socket: Duplex) =>
        socket.end(
          rawProblemResponse(
            new AppError("SERVICE_UNAVAILABLE", "The server is shutting down", { retryAfterSeconds: 1 }),
          ),
        ),
      );
      for (const client of wss.clients) client.close(1001, "Server shutting down");
      // A peer that does not answer the close handshake must not hold the shutdown.
      const terminate = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, CLOSE_GRACE_MS);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      while (wss.clients.size > 0) await new Promise((r) => setTimeout(r, 20));
      clearTimeout(terminate);
    },
  };
}
