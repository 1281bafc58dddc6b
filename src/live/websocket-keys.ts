import type { ClientService } from "../clients/client.service";
import type { Principal } from "../clients/principal";
import { AppError, ERROR_TABLE } from "../errors";
import type { KeyVerdict } from "./key-recheck";

/**
 * Who may hold a live socket: a key with the `events:read` scope. `authorize` runs on
 * `connection_init` (through the same authentication as a request, so it spends a rate-limit token,
 * and a failure spends one of the client address's failed attempts when the address is given);
 * `recheck` runs periodically per connected key, uncached and free of rate limits. Each refusal
 * carries the close code of its error in the one error table.
 */
export function createWebsocketKeyCheck(deps: {
  authenticate: (authorization: string | undefined, address: string | undefined) => Promise<Principal | null>;
  clients: Pick<ClientService, "keyStatus">;
}): {
  authorize: (authorization: unknown, address?: string) => Promise<KeyVerdict>;
  recheck: (keyId: string) => Promise<"valid" | KeyVerdict>;
} {
  const { authenticate, clients } = deps;
  return {
    authorize: async (authorization, address) => {
      try {
        const principal = await authenticate(typeof authorization === "string" ? authorization : undefined, address);
        if (!principal) {
          return refuse("UNAUTHENTICATED", 'Send connection_init with { authorization: "Bearer <key>" }');
        }
        if (!principal.scopes.has("events:read")) {
          return refuse("INSUFFICIENT_SCOPE", "The API key lacks the events:read scope");
        }
        return { ok: true, keyId: principal.keyId };
      } catch (error) {
        if (error instanceof AppError) return refuse(error.code, error.message);
        return refuse("INTERNAL", "Internal error");
      }
    },
    recheck: async (keyId) => {
      const status = await clients.keyStatus(keyId);
      if (!status || status.revoked) return refuse("UNAUTHENTICATED", "The API key was revoked");
      if (!status.scopes.has("events:read")) {
        return refuse("INSUFFICIENT_SCOPE", "The API key no longer has the events:read scope");
      }
      return "valid";
    },
  };
}

function refuse(code: keyof typeof ERROR_TABLE, reason: string): KeyVerdict {
  return { ok: false, code: ERROR_TABLE[code].close, reason };
}
