import type { Server as HttpServer, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type ExecutionResult, type GraphQLSchema, parse, specifiedRules, validate } from "graphql";
import { AppError, ERROR_TABLE } from "../errors";
import { checkOperationLimits } from "../graphql/operation-limits";
import { rawProblemResponse } from "../http/problem";
import { graphqlErrorOf, type GraphQLPolicy } from "../graphql/policy";
import type { Context as WsContext } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import type { Logger } from "pino";
import { type WebSocket, WebSocketServer } from "ws";
import type { GraphQLContext } from "../graphql/context";
import { formatGraphQLError } from "../graphql/errors";
import { createSharedSubscribe } from "./shared-subscribe";

export const GRAPHQL_PATH = "/graphql";
/** graphql-ws pings idle sockets this often so proxies keep them and dead peers are noticed. */
const KEEP_ALIVE_MS = 12_000;
const CONNECTION_INIT_WAIT_TIMEOUT_MS = 3_000;
const CLOSE_GRACE_MS = 1_000;
/** How often each socket's key is checked again. */
const REVALIDATE_MS = 5_000;


export interface GraphQLWebsocket {
  /** Closes every socket (1001 going away) and stops accepting new ones. */
  dispose(): Promise<void>;
  readonly clientCount: () => number;
}

/**
 * graphql-ws on the HTTP server's `upgrade` event at /graphql, next to Fastify and Apollo on the same port.
 * `createContext` builds the resolver context for each operation from the connection's init payload.
 */
export function attachGraphQLWebsocket(options: {
  httpServer: HttpServer;
  schema: GraphQLSchema;
  policy: GraphQLPolicy;
  log: Logger;
  createContext: (ws: WsContext<Record<string, unknown> | undefined>) => Promise<GraphQLContext> | GraphQLContext;
  /**
   * Who the `connection_init` payload's `authorization` names: a principal, or an error to close with.
   * Called at connect and again every REVALIDATE_MS, so a revoked key's sockets are closed.
   */
  authorize: (authorization: unknown) => Promise<{ ok: true; keyId: string } | { ok: false; code: number; reason: string }>;
  /** Per key and per socket (docs/API.md "Limits"); over a limit the socket closes with 4429 or the operation gets RATE_LIMITED. */
  limits: {
    maxConnectionsPerKey: number;
    maxSubscriptionsPerSocket: number;
    /** Takes one of the key's rate-limit tokens for an incoming message; throws RATE_LIMITED when none is left. */
    takeMessageToken: (keyId: string) => void;
  };
}): GraphQLWebsocket {
  const { httpServer, schema, policy, log, createContext, authorize, limits } = options;
  const sockets = new Map<WebSocket, { authorization: unknown; keyId: string }>();
  const connectionsByKey = new Map<string, number>();
  const tooMany = ERROR_TABLE.RATE_LIMITED.close;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = (request.url ?? "").split("?")[0];
    if (pathname !== GRAPHQL_PATH) {
      socket.end(rawProblemResponse(new AppError("NOT_FOUND", `No websocket endpoint at ${pathname}; use ${GRAPHQL_PATH}`)));
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit("connection", ws, request));
  };
  httpServer.on("upgrade", onUpgrade);

  const server = useServer<Record<string, unknown> | undefined>(
    {
      schema,
      // Every subscriber of the same event and operation shares one execution (see shared-subscribe.ts).
      subscribe: createSharedSubscribe((payload) => (payload as { eventId?: string } | null)?.eventId) as never,
      connectionInitWaitTimeout: CONNECTION_INIT_WAIT_TIMEOUT_MS,
      validate: (schema, document, rules) => validate(schema, document, [...(rules ?? specifiedRules), ...policy.validationRules]),
      // The same operation limits as over HTTP (they need the variables, which validation rules do
      // not see). With an allow-list, a websocket operation must send a listed document in full.
      onSubscribe: (ctx, id, payload) => {
        const active = Object.keys(ctx.subscriptions).filter((other) => other !== id).length;
        if (active >= limits.maxSubscriptionsPerSocket) {
          return [graphqlErrorOf(new AppError("RATE_LIMITED", `This socket already runs ${active} operations (at most ${limits.maxSubscriptionsPerSocket}); open another socket or stop one`))];
        }
        try {
          policy.allowList?.resolve({ query: payload.query }); // throws OPERATION_NOT_ALLOWED
        } catch (error) {
          if (error instanceof AppError) return [graphqlErrorOf(error)];
          throw error;
        }
        let document;
        try {
          document = parse(payload.query);
        } catch {
          return; // graphql-ws reports the syntax error itself
        }
        const problem = checkOperationLimits(schema, document, payload.operationName, payload.variables, policy.limits);
        return problem ? [graphqlErrorOf(problem)] : undefined;
      },
      onConnect: async (ctx) => {
        const socket = ctx.extra.socket as WebSocket;
        const authorization = ctx.connectionParams?.authorization;
        const verdict = await authorize(authorization);
        if (!verdict.ok) {
          socket.close(verdict.code, verdict.reason);
          return false;
        }
        const open = connectionsByKey.get(verdict.keyId) ?? 0;
        if (open >= limits.maxConnectionsPerKey) {
          socket.close(tooMany, `This API key already has ${open} open websockets (at most ${limits.maxConnectionsPerKey})`);
          return false;
        }
        connectionsByKey.set(verdict.keyId, open + 1);
        sockets.set(socket, { authorization, keyId: verdict.keyId });
        socket.once("close", () => {
          sockets.delete(socket);
          const left = (connectionsByKey.get(verdict.keyId) ?? 1) - 1;
          if (left > 0) connectionsByKey.set(verdict.keyId, left);
          else connectionsByKey.delete(verdict.keyId);
        });
        return true;
      },
      context: (ctx) => createContext(ctx),
      onNext: (_ctx, _id, _payload, _args, result) => formatResult(result as ExecutionResult, log),
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((e) => formatGraphQLError(e.toJSON(), e, (cause) => log.error({ err: cause }, "graphql-ws operation failed"))) as never,
    },
    wss,
    KEEP_ALIVE_MS,
  );

  // graphql-ws treats a client message of a server-only type (connection_ack, next, error) as its
  // own failure: it logs to the console and closes with 4500. It is the client's error, so it is
  // answered as one (4400) before graphql-ws sees it. Registered first, to run before graphql-ws.
  wss.prependListener("connection", (socket: WebSocket) => {
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event === "message" && isServerOnlyMessage(args[0])) {
        socket.close(ERROR_TABLE.VALIDATION_FAILED.close, "Clients may not send connection_ack, next or error messages");
        return true;
      }
      return emit(event, ...args);
    }) as typeof socket.emit;
  });

  // Message rate: every message after connection_init takes one of its key's tokens (the same
  // budget as the key's HTTP requests); a socket over it is closed with 4429.
  wss.on("connection", (socket: WebSocket) => {
    socket.on("message", () => {
      const entry = sockets.get(socket);
      if (!entry) return; // before the handshake: graphql-ws allows only connection_init
      try {
        limits.takeMessageToken(entry.keyId);
      } catch (error) {
        socket.close(tooMany, error instanceof AppError ? error.message : "Too many messages");
      }
    });
  });

  // Revoked keys: one timer re-checks every socket's key (revocations made elsewhere included).
  const patrol = setInterval(() => {
    for (const [socket, { authorization }] of sockets) {
      authorize(authorization).then(
        (verdict) => {
          if (!verdict.ok) socket.close(verdict.code, verdict.reason);
        },
        () => {},
      );
    }
  }, REVALIDATE_MS);
  patrol.unref();

  return {
    clientCount: () => wss.clients.size,
    async dispose() {
      clearInterval(patrol);
      // Clients reconnect at once when closed below, often on a kept-alive connection. Refuse those
      // upgrades and close their connections: left unanswered they would hold the server's close open.
      httpServer.off("upgrade", onUpgrade);
      httpServer.on("upgrade", (_request: IncomingMessage, socket: Duplex) =>
        socket.end(rawProblemResponse(new AppError("SERVICE_UNAVAILABLE", "The server is shutting down", { retryAfterSeconds: 1 }))),
      );
      for (const client of wss.clients) client.close(1001, "Server shutting down");
      // A peer that does not answer the close handshake must not hold the shutdown.
      const terminate = setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, CLOSE_GRACE_MS);
      await server.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      clearTimeout(terminate);
    },
  };
}

function formatResult(result: ExecutionResult, log: Logger): ExecutionResult | void {
  if (!result.errors?.length) return;
  return {
    ...result,
    errors: result.errors.map((e) => formatGraphQLError(e.toJSON(), e, (cause) => log.error({ err: cause }, "graphql-ws resolver failed"))) as never,
  };
}

const SERVER_ONLY_TYPE = /"type"\s*:\s*"(connection_ack|next|error)"/;

function isServerOnlyMessage(data: unknown): boolean {
  const text = Buffer.isBuffer(data) ? data.toString("utf8") : typeof data === "string" ? data : "";
  if (!SERVER_ONLY_TYPE.test(text)) return false;
  try {
    const type = (JSON.parse(text) as { type?: unknown } | null)?.type;
    return type === "connection_ack" || type === "next" || type === "error";
  } catch {
    return false; // not JSON: graphql-ws answers that itself (4400)
  }
}
