import { AppError } from "../errors";
import type { Scope } from "./credentials";

/** Who is calling: resolved from an API key. */
export interface Principal {
  readonly clientId: string;
  readonly keyId: string;
  readonly scopes: ReadonlySet<Scope>;
  readonly callbackPrefixes: readonly string[];
  readonly maxSubscriptions: number;
}

/** The transports' one entry point for authorisation: the caller must hold at least one of `scopes`. */
export function requireScope(principal: Principal | null, ...scopes: [Scope, ...Scope[]]): Principal {
  if (!principal) throw new AppError("UNAUTHENTICATED", "Send a valid API key as Authorization: Bearer <key>");
  if (!scopes.some((scope) => principal.scopes.has(scope))) {
    throw new AppError(
      "INSUFFICIENT_SCOPE",
      `This API key lacks the ${scopes.map((s) => `"${s}"`).join(" or ")} scope`,
    );
  }
  return principal;
}
