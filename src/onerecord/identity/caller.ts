import type { Scope } from "../../clients/credentials";
import type { Principal } from "../../clients/principal";
import { AppError } from "../../errors";
import { clientOrganizationId } from "./organizations";

/** Who calls the ONE Record API: the Organization it acts for and what it may do. */
export interface OneRecordCaller {
  /** The Organization's local id: "organization-<client uuid>", or an agent's (organizations.ts). */
  readonly organizationId: string;
  /** Its absolute URI, as api:hasRequestor and the like name it. */
  readonly organizationUri: string;
  readonly scopes: ReadonlySet<Scope>;
  /** The OIDC token's `logistics_agent_uri`; absent for an API key. */
  readonly agentUri?: string;
  /** The API key's principal; absent for an OIDC agent. */
  readonly principal?: Principal;
}

export interface OneRecordCallerDeps {
  /**
   * src/http/auth.ts `authenticate` with the REST routes' rate limiter and failed-authentication
   * budget (composition/mount-transports.ts `authenticateHeader`): null without credentials.
   */
  authenticateApiKey: (authorization: string | undefined, clientAddress: string) => Promise<Principal | null>;
  /** An Organization's URI from its local id (uris.ts objectUri): asked per request, as the base URL may be known late. */
  organizationUri: (organizationId: string) => string;
}

export interface OneRecordCallers {
  /** The caller of a request from its Authorization header; UNAUTHENTICATED (401) without valid credentials. */
  resolve(authorization: string | undefined, clientAddress: string): Promise<OneRecordCaller>;
}

export function createOneRecordCallers(deps: OneRecordCallerDeps): OneRecordCallers {
  return {
    async resolve(authorization, clientAddress) {
      const principal = await deps.authenticateApiKey(authorization, clientAddress);
      if (!principal) throw missingCredentials();
      return callerOfApiKey(principal, deps.organizationUri);
    },
  };
}

export function callerOfApiKey(principal: Principal, organizationUri: (id: string) => string): OneRecordCaller {
  const organizationId = clientOrganizationId(principal.clientId);
  return {
    organizationId,
    organizationUri: organizationUri(organizationId),
    scopes: principal.scopes,
    principal,
  };
}

const missingCredentials = () =>
  new AppError("UNAUTHENTICATED", "Send an API key or an access token as Authorization: Bearer <credential>");
