import {
  createSourceEventStream,
  type ExecutionArgs,
  type ExecutionResult,
  getOperationAST,
  GraphQLError,
  OperationTypeNode,
  type GraphQLSchema,
} from "graphql";
import type { SubscribePayload } from "graphql-ws";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import { ERROR_TABLE } from "../errors";
import { compiledExecutorFor } from "../graphql-core/compiled-executor";
import type { GraphQLContext } from "../graphql-core/context";
import { formatGraphQLError } from "../graphql-core/errors";
import type { GraphQLPolicy } from "../graphql-core/policy";
import { executeWithinTimeLimit } from "../graphql-core/time-limit";
import type { AwbStreams } from "./awb-streams";
import type { ConnectionCap } from "./connection-cap";
import { createDocumentCache } from "./document-cache";
import {
  createProtocol,
  type Protocol,
  holds,
  OPEN,
  type ProtocolSocket,
  type Reservation,
  type SocketState,
  sendFrame,
} from "./graphql-ws-protocol";
import type { KeyVerdict } from "./key-recheck";
import type { LiveMilestone } from "./live-events";
import { type FeedSource, LiveFeed } from "./live-feed";
import { createLiveOperations } from "./live-operations";
import { admitOperation } from "./operation-admission";
import { refuseOperationOverLimit } from "./socket-limits";

const CONNECTION_INIT_WAIT_TIMEOUT_MS = 3_000;

export interface GraphQLWsServerOptions {
  schema: GraphQLSchema;
  policy: GraphQLPolicy;
  log: Logger;
  createContext: (
    socket: WebSocket,
    connectionParams: Record<string, unknown> | undefined,
    subscriptionId: string,
  ) => GraphQLContext;
  /** Who the `connection_init` payload's `authorization` names (charging its rate limit like a request). */
  authorize: (authorization: unknown, address: string | undefined) => Promise<KeyVerdict>;
  connections: ConnectionCap;
  maxSubscriptionsPerSocket: number;
  live: {
    streams: AwbStreams;
    readAfter: (awb: string, position: number, limit: number) => Promise<LiveMilestone[]>;
    maxQueuedEvents: number;
  };
}

export interface GraphQLWsServer {
  /** The graphql-transport-ws protocol with our rules; a transport hands it each socket's events. */
  readonly protocol: Protocol;
  /** Live subscriptions (feeds) running. */
  readonly subscriptionCount: () => number;
  /** Executions of live subscription operations so far: one per (event, operation), however many subscribers. */
  readonly liveExecutions: () => number;
}

/**
 * The graphql-transport-ws protocol (graphql-ws-protocol.ts) with the gateway's rules:
 * `connection_init` authorised and counted under its key's cap, every operation admitted as over HTTP
 * (operation-admission.ts) with its document parsed and validated once per cached text
 * (document-cache.ts), queries and mutations run compiled within the time limit, live subscriptions
 * started as LiveFeeds that share one rendering per (event, operation) (live-operations.ts).
 */
export function createGraphQLWsServer(options: GraphQLWsServerOptions): GraphQLWsServer {
  const { schema, policy, log, createContext, authorize, connections, maxSubscriptionsPerSocket, live } = options;
  const hideSuggestions = !policy.introspection;
  const formatErrors = (errors: readonly GraphQLError[], message: string) =>
    errors.map((e) =>
      formatGraphQLError(e.toJSON(), e, (cause) => log.error({ err: cause }, message), { hideSuggestions }),
    );
  const formatResult = (result: ExecutionResult): ExecutionResult =>
    result.errors?.length
      ? { ...result, errors: formatErrors(result.errors, "graphql-ws resolver failed") as never }
      : result;
  const operations = createLiveOperations({ schema, format: formatResult });
  const documents = createDocumentCache({ schema, policy });
  // The same compiled queries as over HTTP; compiling also puts the time limit's deadline check on every field.
  const compiled = compiledExecutorFor(schema);
  /** What every feed reads from: one object for all of them. */
  const feedSource: FeedSource = {
    streams: live.streams,
    readAfter: live.readAfter,
    maxQueuedEvents: live.maxQueuedEvents,
    log,
  };
  let subscriptions = 0;

  const sendErrors = (socket: ProtocolSocket, id: string, errors: readonly GraphQLError[]) =>
    sendFrame(
      socket,
      JSON.stringify({ id, type: "error", payload: formatErrors(errors, "graphql-ws operation failed") }),
    );
  const sendComplete = (socket: ProtocolSocket, id: string) =>
    sendFrame(socket, `{"id":${JSON.stringify(id)},"type":"complete"}`);

  async function connect(socket: ProtocolSocket, state: SocketState): Promise<boolean> {
    const verdict = await authorize(state.connectionParams?.authorization, state.address);
    // Closed while the key was looked up: its close handler has run and must not be followed by a count.
    if (socket.readyState !== OPEN) return false;
    if (!verdict.ok) {
      socket.close(verdict.code, verdict.reason);
      return false;
    }
    const slot = await connections.acquire(verdict.keyId);
    if ("refused" in slot) {
      socket.close(
        ERROR_TABLE.RATE_LIMITED.close,
        `This API key already has ${slot.refused.open} open websockets (at most ${connections.max})`,
      );
      return false;
    }
    // Closed while the slot was taken: its close handler has run, so the slot goes back here.
    if (socket.readyState !== OPEN) {
      slot.release();
      return false;
    }
    state.releaseSlot = slot.release;
    state.keyId = verdict.keyId;
    return true;
  }

  /** Starts a subscription's feed, unless the client completed it (or left) while it was set up. */
  function startFeed(
    socket: ProtocolSocket,
    state: SocketState,
    reservation: Reservation,
    feed: LiveFeed,
    args: ExecutionArgs,
  ) {
    if (!holds(state, reservation)) return void feed.return();
    const id = reservation.id;
    // Shared by text, not by node: a text dropped from the cache and parsed again still shares it.
    const operation = operations.acquire({ ...args, query: documents.queryOf(args.document) });
    subscriptions++;
    state.operations!.set(id, feed);
    feed.start(feedSource, {
      socket,
      id,
      operation,
      onEnd: (failure) => {
        subscriptions--;
        operation.release();
        // Ended by itself, not by the client's complete or its socket closing: the client is told.
        if (state.operations?.get(id) !== feed) return;
        state.operations.delete(id);
        if (failure === undefined) sendComplete(socket, id);
        else sendErrors(socket, id, [subscriptionFailure(failure)]);
      },
    });
  }

  async function subscribe(
    socket: ProtocolSocket,
    state: SocketState,
    reservation: Reservation,
    payload: SubscribePayload,
  ) {
    const id = reservation.id;
    const overLimit = refuseOperationOverLimit(state.operations!.size - 1, maxSubscriptionsPerSocket);
    if (overLimit) return sendErrors(socket, id, [overLimit]);
    const admitted = admitOperation(payload, { schema, policy, documents });
    if ("errors" in admitted) return sendErrors(socket, id, admitted.errors);
    const operationAST = getOperationAST(admitted.document, payload.operationName);
    if (!operationAST) return sendErrors(socket, id, [new GraphQLError("Unable to identify operation")]);
    const args: ExecutionArgs = {
      schema,
      document: admitted.document,
      operationName: payload.operationName,
      variableValues: payload.variables,
      contextValue: createContext(socket as WebSocket, state.connectionParams, id),
    };
    let result: ExecutionResult;
    if (operationAST.operation === OperationTypeNode.SUBSCRIPTION) {
      const source = await createSourceEventStream(args);
      if (source instanceof LiveFeed) return startFeed(socket, state, reservation, source, args);
      // Every subscription field of this schema returns a LiveFeed; anything else is an error result.
      result =
        Symbol.asyncIterator in source ? { errors: [new GraphQLError("Unsupported subscription source")] } : source;
    } else {
      // The policy's time limit, as over HTTP (graphql/limits-plugin.ts).
      result = await executeWithinTimeLimit(args, policy.timeLimitMs, (a) =>
        compiled.execute(a, documents.queryOf(a.document)),
      );
    }
    if (!holds(state, reservation)) return;
    sendFrame(socket, JSON.stringify({ id, type: "next", payload: formatResult(result) }));
    sendComplete(socket, id);
  }

  return {
    protocol: createProtocol({ connect, subscribe }, { connectionInitWaitTimeoutMs: CONNECTION_INIT_WAIT_TIMEOUT_MS }),
    subscriptionCount: () => subscriptions,
    liveExecutions: () => operations.executions(),
  };
}

/** A feed's failure as its operation's error: a GraphQLError without a path, its cause kept for the error table. */
function subscriptionFailure(failure: unknown): GraphQLError {
  const originalError = failure instanceof Error ? failure : new Error(String(failure));
  return new GraphQLError(originalError.message, { originalError });
}
