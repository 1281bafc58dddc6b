import type { GraphQLError } from "graphql";
import { AppError, ERROR_TABLE } from "../errors";
import { graphqlErrorOf } from "../graphql-core/policy";

/** The largest message a socket may send; `ws` closes the socket (1009) on a larger one. */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** Why a socket closes instead of handing its message to the protocol (graphql-ws-protocol.ts). */
export interface MessageRefusal {
  readonly code: number;
  readonly reason: string;
}

/**
 * Checks a socket's message before the protocol sees it: after the handshake (`keyId` known) every
 * message takes one of its key's rate-limit tokens, the budget of its HTTP requests; and a message
 * of a server-only type is the client's error (4400, not the protocol's own failure, 4500).
 */
export function refuseMessage(
  text: string,
  keyId: string | undefined,
  takeMessageToken: (keyId: string) => void,
): MessageRefusal | undefined {
  if (keyId !== undefined) {
    try {
      takeMessageToken(keyId);
    } catch (error) {
      return {
        code: ERROR_TABLE.RATE_LIMITED.close,
        reason: error instanceof AppError ? error.message : "Too many messages",
      };
    }
  }
  if (isServerOnlyMessage(text)) {
    return {
      code: ERROR_TABLE.VALIDATION_FAILED.close,
      reason: "Clients may not send connection_ack, next or error messages",
    };
  }
  return undefined;
}

/** RATE_LIMITED when a socket already runs `running` operations besides the one it subscribes. */
export function refuseOperationOverLimit(running: number, maxPerSocket: number): GraphQLError | undefined {
  if (running < maxPerSocket) return undefined;
  return graphqlErrorOf(
    new AppError(
      "RATE_LIMITED",
      `This socket already runs ${running} operations (at most ${maxPerSocket}); open another socket or stop one`,
    ),
  );
}

const SERVER_ONLY_TYPE = /"type"\s*:\s*"(connection_ack|next|error)"/;

function isServerOnlyMessage(text: string): boolean {
  if (!SERVER_ONLY_TYPE.test(text)) return false;
  try {
    const type = (JSON.parse(text) as { type?: unknown } | null)?.type;
    return type === "connection_ack" || type === "next" || type === "error";
  } catch {
    return false; // not JSON: the protocol answers that itself (4400)
  }
}
