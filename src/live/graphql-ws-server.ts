import {
  createSourceEventStream,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
} from "graphql";
import { makeServer, type Server } from "graphql-ws";
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
import type { KeyVerdict } from "./key-recheck";
import type { LiveMilestone } from "./live-events";
import { LiveFeed } from "./live-feed";
import { createLiveOperations } from "./live-operations";
import { admitOperation } from "./operation-admission";
import { refuseOperationOverLimit } from "./socket-limits";

const CONNECTION_INIT_WAIT_TIMEOUT_MS = 3_000;

/** Our state of one socket; graphql-ws keeps its own (`ctx`) beside it. */
export interface SocketState {
  /** The client's address, for the per-address budget of failed authentications. */
  readonly address: string | undefined;
  /** Set once `connection_init` is authorised. */
  keyId: string | undefined;
  /** Gives back the socket's slot under its key's connection cap (set once it has one). */
  releaseSlot: (() => void) | undefined;
}

/** What a transport hands graphql-ws with each socket: live feeds write their frames to `socket` directly. */
export interface SocketExtra {
  readonly socket: WebSocket;
  readonly state: SocketState;
}

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
    readAfter(awb: string, position: number, limit: number): Promise<LiveMilestone[]>;
    maxQueuedEvents: number;
  };
}

export interface GraphQLWsServer {
  /** graphql-ws's protocol core, configured with our rules; a transport calls its `opened` per socket. */
  readonly protocol: Server<SocketExtra>;
  /** Live subscriptions (feeds) running. */
  readonly subscriptionCount: () => number;
  /** Executions of live subscription operations so far: one per (event, operation), however many subscribers. */
  readonly liveExecutions: () => number;
}

/**
 * graphql-ws's protocol core (`makeServer`) with the gateway's rules: `connection_init` authorised
 * and counted under its key's cap, every operation admitted as over HTTP (operation-admission.ts)
 * with its document parsed and validated once per cached text (document-cache.ts), queries and
 * mutations run compiled within the time limit, live subscriptions started as LiveFeeds that share
 * one rendering per (event, operation) (live-operations.ts).
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
  let subscriptions = 0;

  const protocol = makeServer<Record<string, unknown> | undefined, SocketExtra>({
    schema,
    connectionInitWaitTimeout: CONNECTION_INIT_WAIT_TIMEOUT_MS,
    onConnect: async (ctx) => {
      const { socket, state } = ctx.extra;
      const verdict = await authorize(ctx.connectionParams?.authorization, state.address);
      // Closed while the key was looked up: its close handler has run and must not be followed by a count.
      if (socket.readyState !== socket.OPEN) return false;
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
      if (socket.readyState !== socket.OPEN) {
        slot.release();
        return false;
      }
      state.releaseSlot = slot.release;
      state.keyId = verdict.keyId;
      return true;
    },
    // Returning the execution arguments skips graphql-ws's own parse and validate: admission did them.
    onSubscribe: (ctx, id, payload) => {
      const running = Object.keys(ctx.subscriptions).filter((other) => other !== id).length;
      const overLimit = refuseOperationOverLimit(running, maxSubscriptionsPerSocket);
      if (overLimit) return [overLimit];
      const admitted = admitOperation(payload, { schema, policy, documents });
      if ("errors" in admitted) return [...admitted.errors];
      return {
        schema,
        document: admitted.document,
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
      // Shared by text, not by node: a text dropped from the cache and parsed again still shares it.
      const operation = operations.acquire({ ...args, query: documents.queryOf(args.document) });
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
    // The policy's time limit, as over HTTP (graphql/limits-plugin.ts).
    execute: (args: ExecutionArgs) =>
      executeWithinTimeLimit(args, policy.timeLimitMs, (a) => compiled.execute(a, documents.queryOf(a.document))),
    onNext: (_ctx, _id, _payload, _args, result) => formatResult(result),
    onError: (_ctx, _id, _payload, errors) => formatErrors(errors, "graphql-ws operation failed"),
  });

  return {
    protocol,
    subscriptionCount: () => subscriptions,
    liveExecutions: () => operations.executions(),
  };
}
