import type { ApolloServerPlugin } from "@apollo/server";
import { OperationTypeNode } from "graphql";
import { checkOperationLimits, type OperationLimits } from "../graphql-core/operation-limits";
import { graphqlErrorOf, operationTimedOut } from "../graphql-core/policy";
import { type Deadline, endDeadline, startDeadline } from "../graphql-core/time-limit";
import type { GraphQLContext } from "../graphql-core/context";
import type { ExecutionTurns } from "../event-loop-turns";

/**
 * Operation limits over HTTP. Before execution: cost, aliases and list arguments, with the request's
 * variables (a validation rule cannot see them). During execution: the time limit (time-limit.ts,
 * the same mechanism as over websockets) — once it has passed, every field not yet started fails at
 * once, so a runaway query stops consuming the server. A timed-out query answers one
 * OPERATION_TIMED_OUT error instead of thousands of field errors; a timed-out mutation keeps its
 * partial data, since the fields that ran have taken effect. A caller without a key (or whose key
 * does not authenticate) is held to `anonymousLimits`. The operations of a batch (which Apollo starts
 * together) each take a turn of their own in `turns`, as whole requests do.
 */
export function operationLimitsPlugin(options: {
  limits: OperationLimits;
  anonymousLimits: OperationLimits;
  timeLimitMs: number;
  turns: ExecutionTurns;
}): ApolloServerPlugin<GraphQLContext> {
  const { limits, anonymousLimits, timeLimitMs, turns } = options;
  return {
    async requestDidStart({ requestIsBatched }) {
      if (requestIsBatched) await turns.next();
      let deadline: Deadline | undefined;
      let isQuery = true;
      return {
        async didResolveOperation({ schema, document, operationName, request, operation, contextValue }) {
          isQuery = operation?.operation === OperationTypeNode.QUERY;
          const keyed = await contextValue.auth().then(
            (principal) => principal !== null,
            () => false,
          );
          const error = checkOperationLimits(
            schema,
            document,
            operationName,
            request.variables,
            keyed ? limits : anonymousLimits,
          );
          if (error) throw graphqlErrorOf(error, { http: true });
        },
        async executionDidStart({ contextValue }) {
          if (timeLimitMs > 0) deadline = startDeadline(contextValue, timeLimitMs);
        },
        async willSendResponse({ response, contextValue }) {
          endDeadline(contextValue);
          if (!deadline?.timedOut || !isQuery || response.body.kind !== "single") return;
          const error = operationTimedOut(timeLimitMs);
          response.body.singleResult = { errors: [graphqlErrorOf(error)] };
          response.http.status = error.status;
        },
      };
    },
  };
}
