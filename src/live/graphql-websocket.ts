import type { Server as HttpServer, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  parse,
  specifiedRules,
  validate,
} from "graphql";
import { CloseCode, type Context as WsContext, handleProtocols, makeServer } from "graphql-ws";
import type { Logger } from "pino";
import { type WebSocket, WebSocketServer } from "ws";
import { groupBy } from "../domain/group-by";
import { AppError, ERROR_TABLE } from "../errors";
import type { GraphQLContext } from "../graphql-core/context";
import { formatGraphQLError } from "../graphql-core/errors";
import { checkDocumentLength, checkFieldComparisons } from "../graphql-core/field-comparisons";
import { checkOperationLimits } from "../graphql-core/operation-limits";
import { graphqlErrorOf, type GraphQLPolicy } from "../graphql-core/policy";
import { compiledExecutorFor } from "../graphql-core/compiled-executor";
import { executeWithinTimeLimit } from "../graphql-core/time-limit";
import { rawProblemResponse } from "../http/problem";
import type { AwbStreams } from "./awb-streams";
import { LiveFeed } from "./live-feed";
import type { LiveMilestone } from "./live-events";
import type { ConnectionCap } from "./connection-cap";
import { createLiveOperations } from "./live-operations";

export const GRAPHQL_PATH = "/graphql";
/** Every socket is pinged this often; one that has not answered the previous ping is dropped. */
const KEEP_ALIVE_MS = 12_000;
const CONNECTION_INIT_WAIT_TIMEOUT_MS = 3_000;
const CLOSE_GRACE_MS = 1_000;
/** Parsed and validated documents kept by their text, least recently used dropped first (dashboards send the same few operations). */
const MAX_CACHED_DOCUMENTS = 500;
const MAX_MESSAGE_BYTES = 64 * 1024;

/** What a key's connection may do: a verdict at connect, and again on every re-check. */
export type KeyVerdict = { ok: true; keyId: string } | { ok: false; code: number; reason: string };

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

/** Our state of one socket; graphql-ws keeps its own (`ctx`) beside it. */
interface SocketState {
  alive: boolean;
  authorization: unknown;
  keyId: string | undefined;
  /** Gives back the socket's slot under its key's connection cap (set once it has one). */
  releaseSlot: (() => void) | undefined;
  /** The client's address, for the per-address budget of failed authentications. */
  address: string | undefined;
}

/**
 * GraphQL over websockets (the graphql-transport-ws protocol) on the HTTP server's `upgrade` event at
 * /graphql, next to Fastify and Apollo on the same port. graphql-ws's protocol core (`makeServer`)
 * runs the protocol; this module is its `ws` adapter, owned here rather than taken from
 * `graphql-ws/use/ws`, so that it can refuse messages before the core sees them, keep one keep-alive
 * timer for all sockets, and let live subscriptions write their frames directly (live-feed.ts).
 */
export function attachGraphQLWebsocket(options: {
  httpServer: HttpServer;
  schema: GraphQLSchema;
  policy: GraphQLPolicy;
  log: Logger;
  createContext: (
    socket: WebSocket,
    connectionParams: Record<string, unknown> | undefined,
    subscriptionId: string,
  ) => GraphQLContext;
  /** Who the `connection_init` payload's `authorization` names, at connect (charging its rate limit like a request). */
  authorize: (authorization: unknown, address: string | undefined) => Promise<KeyVerdict>;
  /** The client address of an upgrade request, as HTTP requests read it (http/client-address.ts). */
  addressOf: (request: IncomingMessage) => string | undefined;
  /**
   * The periodic re-check of a connected key: `revoked` closes its sockets, anything else keeps them.
   * MUST NOT charge the key's rate limit, and a failure (database down) MUST NOT count as revoked.
   */
  recheck: (keyId: string) => Promise<"valid" | KeyVerdict>;
  /**
   * How often the key behind every socket is looked up again. A revocation made anywhere reaches its
   * sockets at the first re-check after it — a round is skipped while the previous one still runs,
   * so allow about two periods plus the lookup.
   */
  recheckMs: number;
  live: {
    streams: AwbStreams;
    readAfter(awb: string, position: number, limit: number): Promise<LiveMilestone[]>;
    maxQueuedEvents: number;
  };
  /** Per key and per socket (docs/API.md "Limits"); over a limit the socket closes with 4429 or the operation gets RATE_LIMITED. */
  limits: {
    /** Open sockets per key (connection-cap.ts: this instance's, or shared through Redis). */
    connections: ConnectionCap;
    maxSubscriptionsPerSocket: number;
    /** Takes one of the key's rate-limit tokens for an incoming message; throws RATE_LIMITED when none is left. */
    takeMessageToken: (keyId: string) => void;
  };
}): GraphQLWebsocket {
  const { httpServer, schema, policy, log, createContext, authorize, addressOf, recheck, recheckMs, live, limits } =
    options;
  const states = new Map<WebSocket, SocketState>();
  const tooMany = ERROR_TABLE.RATE_LIMITED.close;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    handleProtocols,
    clientTracking: true,
  });
  const hideSuggestions = !policy.introspection;
  const operations = createLiveOperations({ schema, format: (result) => formatResult(result, log, hideSuggestions) });
  const documents = new Map<
    string,
    { document: DocumentNode; validationErrors: readonly GraphQLError[] } | { syntaxErrors: readonly GraphQLError[] }
  >();
  /** The text each cached document was parsed from: live operations are shared by text, not by node. */
  const queryOf = new WeakMap<DocumentNode, string>();
  let subscriptions = 0;
  // Queries run compiled (graphql-core/compiled-executor.ts, the same cache as over HTTP; mutations go
  // through it to graphql-js); making it also puts the time limit's deadline check on every field.
  const compiled = compiledExecutorFor(schema);

  /**
   * Parses and validates a query, cached by its text: while cached, the same DocumentNode is shared by
   * every socket that sends it. The cache keeps the MAX_CACHED_DOCUMENTS most recently used texts; a
   * text dropped from it is parsed again when it comes back (its live operations are still shared,
   * being keyed by text).
   */
  function documentOf(
    query: string,
  ): { document: DocumentNode; validationErrors: readonly GraphQLError[] } | { syntaxErrors: readonly GraphQLError[] } {
    let entry = documents.get(query);
    if (entry) {
      // Most recently used last: eviction takes the first.
      documents.delete(query);
      documents.set(query, entry);
      return entry;
    }
    try {
      const document = parse(query, { maxTokens: policy.maxTokens });
      const tooManyComparisons = documentRefusal(query, document);
      entry = {
        document,
        validationErrors: tooManyComparisons
          ? [tooManyComparisons]
          : validate(schema, document, [...specifiedRules, ...policy.validationRules]),
      };
      queryOf.set(document, query);
    } catch (error) {
      entry = { syntaxErrors: [error instanceof GraphQLError ? error : new GraphQLError(String(error))] };
    }
    if (documents.size >= MAX_CACHED_DOCUMENTS) documents.delete(documents.keys().next().value!);
    documents.set(query, entry);
    return entry;
  }

  const server = makeServer<Record<string, unknown> | undefined, { socket: WebSocket; state: SocketState }>({
    schema,
    connectionInitWaitTimeout: CONNECTION_INIT_WAIT_TIMEOUT_MS,
    onConnect: async (ctx) => {
      const { socket, state } = ctx.extra;
      const authorization = ctx.connectionParams?.authorization;
      const verdict = await authorize(authorization, state.address);
      // Closed while the key was looked up: its close handler has run and must not be followed by a count.
      if (socket.readyState !== socket.OPEN) return false;
      if (!verdict.ok) {
        socket.close(verdict.code, verdict.reason);
        return false;
      }
      const slot = await limits.connections.acquire(verdict.keyId);
      if ("refused" in slot) {
        socket.close(
          tooMany,
          `This API key already has ${slot.refused.open} open websockets (at most ${limits.connections.max})`,
        );
        return false;
      }
      // Closed while the slot was taken: its close handler has run, so the slot goes back here.
      if (socket.readyState !== socket.OPEN) {
        slot.release();
        return false;
      }
      state.releaseSlot = slot.release;
      state.authorization = authorization;
      state.keyId = verdict.keyId;
      return true;
    },
    // The same rules as over HTTP: allow-list, validation (with our depth rule), and the operation
    // limits, which need the variables. Returning the execution arguments skips graphql-ws's own
    // parse and validate: they were done here, once per document text while it stays cached.
    onSubscribe: (ctx, id, payload) => {
      const active = Object.keys(ctx.subscriptions).filter((other) => other !== id).length;
      if (active >= limits.maxSubscriptionsPerSocket) {
        return [
          graphqlErrorOf(
            new AppError(
              "RATE_LIMITED",
              `This socket already runs ${active} operations (at most ${limits.maxSubscriptionsPerSocket}); open another socket or stop one`,
            ),
          ),
        ];
      }
      try {
        policy.allowList?.resolve({ query: payload.query }); // throws OPERATION_NOT_ALLOWED
      } catch (error) {
        if (error instanceof AppError) return [graphqlErrorOf(error)];
        throw error;
      }
      const parsed = documentOf(payload.query);
      if ("syntaxErrors" in parsed) return [...parsed.syntaxErrors];
      // The limits first: an abusive operation is refused for what it is, whatever else is wrong with it.
      const problem = checkOperationLimits(
        schema,
        parsed.document,
        payload.operationName,
        payload.variables,
        policy.limits,
      );
      if (problem) return [graphqlErrorOf(problem)];
      if (parsed.validationErrors.length > 0) return [...parsed.validationErrors];
      return {
        schema,
        document: parsed.document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: createContext(ctx.extra.socket, ctx.connectionParams, id),
      };
    },
    subscribe: async (args: ExecutionArgs) => {
      const source = await createSourceEventStream(args);
      if (!(source instanceof LiveFeed)) {
        // Every subscription field of this schema returns a LiveFeed; anything else is an error result.
        return Symbol.asyncIterator in source
          ? { errors: [new GraphQLError("Unsupported subscription source")] }
          : source;
      }
      const context = args.contextValue as GraphQLContext;
      const operation = operations.acquire({ ...args, query: queryOf.get(args.document) });
      subscriptions++;
      source.start({
        streams: live.streams,
        readAfter: (awb, position, limit) => live.readAfter(awb, position, limit),
        socket: context.websocket!.socket,
        id: context.websocket!.subscriptionId,
        operation,
        maxQueuedEvents: live.maxQueuedEvents,
        log,
        onEnd: () => {
          subscriptions--;
          operation.release();
        },
      });
      return source;
    },
    // Queries and mutations: with the policy's time limit, as over HTTP (graphql/limits-plugin.ts);
    // a query is compiled once per text while it stays cached.
    execute: (args: ExecutionArgs) =>
      executeWithinTimeLimit(args, policy.timeLimitMs, (a) => compiled.execute(a, queryOf.get(a.document))),
    onNext: (_ctx, _id, _payload, _args, result) => formatResult(result, log, hideSuggestions),
    onError: (_ctx, _id, _payload, errors) =>
      errors.map((e) =>
        formatGraphQLError(e.toJSON(), e, (cause) => log.error({ err: cause }, "graphql-ws operation failed"), {
          hideSuggestions,
        }),
      ),
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

  function onConnection(socket: WebSocket, address: string | undefined): void {
    const state: SocketState = {
      alive: true,
      authorization: undefined,
      keyId: undefined,
      releaseSlot: undefined,
      address,
    };
    states.set(socket, state);
    socket.on("pong", () => (state.alive = true));
    socket.on("error", (error) => log.debug({ err: error }, "websocket error"));
    let handle: ((data: string) => Promise<void>) | undefined;
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (error) => (error ? reject(error) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) => (handle = cb),
      },
      { socket, state },
    );
    socket.on("message", (data: Buffer, isBinary: boolean) => {
      const text = isBinary ? "" : data.toString("utf8");
      if (state.keyId !== undefined) {
        // Every message after the handshake takes a token of its key (the budget of its HTTP requests).
        try {
          limits.takeMessageToken(state.keyId);
        } catch (error) {
          socket.close(tooMany, error instanceof AppError ? error.message : "Too many messages");
          return;
        }
      }
      // graphql-ws treats a client message of a server-only type as its own failure (it logs and
      // closes 4500); it is the client's error, answered here as one.
      if (isServerOnlyMessage(text)) {
        socket.close(
          ERROR_TABLE.VALIDATION_FAILED.close,
          "Clients may not send connection_ack, next or error messages",
        );
        return;
      }
      handle?.(text).catch((error: unknown) => {
        log.error({ err: error }, "websocket message handling failed");
        socket.close(CloseCode.InternalServerError, "Internal server error");
      });
    });
    socket.once("close", (code: number, reason: Buffer) => {
      states.delete(socket);
      state.releaseSlot?.();
      void closed(code, reason.toString()).catch((error: unknown) =>
        log.warn({ err: error }, "closing a websocket's operations failed"),
      );
    });
  }

  // One timer pings every socket; a socket that did not answer the last ping is dropped.
  const heartbeat = setInterval(() => {
    for (const [socket, state] of states) {
      if (!state.alive) {
        socket.terminate();
        continue;
      }
      state.alive = false;
      socket.ping();
    }
  }, KEEP_ALIVE_MS);
  heartbeat.unref();

  // Revoked keys: every recheckMs each distinct key with open sockets is looked up once; a tick is
  // skipped while the previous round still runs. Only a definite answer (revoked, or the scope
  // gone) closes sockets; a failed lookup keeps them.
  let patrolling = false;
  const patrol = setInterval(() => {
    if (patrolling) return;
    patrolling = true;
    const byKey = groupBy(
      [...states].filter(([, state]) => state.keyId !== undefined),
      ([, state]) => state.keyId!,
    );
    void Promise.all(
      [...byKey].map(async ([keyId, sockets]) => {
        try {
          const verdict = await recheck(keyId);
          if (verdict !== "valid" && !verdict.ok)
            for (const [socket] of sockets) socket.close(verdict.code, verdict.reason);
        } catch (error) {
          log.debug({ err: error }, "re-checking a websocket key failed; its sockets stay open");
        }
      }),
    ).finally(() => (patrolling = false));
  }, recheckMs);
  patrol.unref();

  return {
    socketCount: () => states.size,
    subscriptionCount: () => subscriptions,
    liveExecutions: () => operations.executions(),
    async dispose() {
      clearInterval(heartbeat);
      clearInterval(patrol);
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

function formatResult(result: ExecutionResult, log: Logger, hideSuggestions: boolean): ExecutionResult {
  if (!result.errors?.length) return result;
  return {
    ...result,
    errors: result.errors.map((e) =>
      formatGraphQLError(e.toJSON(), e, (cause) => log.error({ err: cause }, "graphql-ws resolver failed"), {
        hideSuggestions,
      }),
    ) as never,
  };
}

const SERVER_ONLY_TYPE = /"type"\s*:\s*"(connection_ack|next|error)"/;

function isServerOnlyMessage(text: string): boolean {
  if (!SERVER_ONLY_TYPE.test(text)) return false;
  try {
    const type = (JSON.parse(text) as { type?: unknown } | null)?.type;
    return type === "connection_ack" || type === "next" || type === "error";
  } catch {
    return false; // not JSON: graphql-ws answers that itself (4400)
  }
}

export type { WsContext };

/** QUERY_TOO_COMPLEX, as a validation error, for a document validation must not see (field-comparisons.ts). */
function documentRefusal(text: string, document: DocumentNode): GraphQLError | undefined {
  try {
    checkDocumentLength(text);
    checkFieldComparisons(document);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return new GraphQLError(error.message, { extensions: { code: error.code } });
  }
}
