import type { Scope } from "../../clients/credentials";
import type { Principal } from "../../clients/principal";
import { AppError } from "../../errors";
import { type AgentToken, looksLikeJwt } from "./jwt-verifier";
import { agentOrganizationId, clientOrganizationId, isClientOrganizationId } from "./organizations";

/** Who calls the ONE Record API: the Organization it acts for and what it may do. */
export interface OneRecordCaller {
  /** The Organization's local id: "organization-<client uuid>", or an agent's (organizations.ts). */
  readonly organizationId: string;
  /** Its absolute URI, as api:hasRequestor and the like name it. */
  readonly organizationUri: string;
  readonly scopes: ReadonlySet<Scope>;
  /** The OIDC token's `logistics_agent_uri`; absent for an API key. */
  readonly agentUri?: string;
  /** When the OIDC token expires: its scopes are attested until then. Absent for an API key. */
  readonly agentExpiresAt?: Date;
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
  /** With config.oneRecord.oidc: OIDC access tokens are taken next to API keys. */
  agents?: AgentAuthentication;
}

export interface AgentAuthentication {
  /** jwt-verifier.ts `createJwtVerifier` over the issuer's keys. */
  verify: (token: string) => Promise<AgentToken>;
  /** The API keys' budget of failed authentications per client address (http/auth-failures.ts). */
  failures: { spend(address: string): void | Promise<void>; refund(address: string): void };
  /** The API keys' rate limit (http/rate-limit.ts `take`), here per agent. */
  takeRequest: (limitKey: string) => void | Promise<void>;
  /** uris.ts localIdOf: an agent URI of this server is the Organization with that id. */
  localIdOf: (uri: string) => string | undefined;
}

export interface OneRecordCallers {
  /** The caller of a request from its Authorization header; UNAUTHENTICATED (401) without valid credentials. */
  resolve(authorization: string | undefined, clientAddress: string): Promise<OneRecordCaller>;
}

export function createOneRecordCallers(deps: OneRecordCallerDeps): OneRecordCallers {
  const { agents, organizationUri } = deps;
  const byApiKey = async (authorization: string, clientAddress: string) => {
    let principal: Principal | null;
    try {
      principal = await deps.authenticateApiKey(authorization, clientAddress);
    } catch (error) {
      throw isJwtFor(authorization) && isUnknownKey(error) ? tokensNotTaken() : error;
    }
    if (!principal) throw missingCredentials();
    return callerOfApiKey(principal, organizationUri);
  };
  return {
    async resolve(authorization, clientAddress) {
      if (authorization === undefined || authorization === "") throw missingCredentials();
      const token = agents && isJwtFor(authorization) ? bearerOf(authorization) : undefined;
      if (agents === undefined || token === undefined) return byApiKey(authorization, clientAddress);
      return callerOfAgent(await verifiedAgent(agents, token, clientAddress), agents, organizationUri);
    },
  };
}

export function callerOfApiKey(principal: Principal, organizationUri: (id: string) => string): OneRecordCaller {
  const organizationId = clientOrganizationId(principal.clientId);
  return { organizationId, organizationUri: organizationUri(organizationId), scopes: principal.scopes, principal };
}

/**
 * As for an API key, a token first spends one of its address's failed-authentication attempts (none
 * left: 429 before any verification) and gets it back when it verifies or the issuer's keys could
 * not be fetched: only refused tokens stay spent.
 */
async function verifiedAgent(agents: AgentAuthentication, token: string, clientAddress: string): Promise<AgentToken> {
  await agents.failures.spend(clientAddress);
  let agent: AgentToken;
  try {
    agent = await agents.verify(token);
  } catch (error) {
    if (!(error instanceof AppError && error.code === "UNAUTHENTICATED")) agents.failures.refund(clientAddress);
    throw error;
  }
  agents.failures.refund(clientAddress);
  await agents.takeRequest(`agent:${agent.agentUri}`);
  return agent;
}

/**
 * An agent URI of this server may name an API client's Organization or a logistics object a caller
 * created (an Organization it was given access as: delegations check the type). The carrier's
 * Organization, a station, an AWB's objects or any other reference object of this server is no agent:
 * acting as one would take its privileges (the carrier's are the AWB's objects and its reference data).
 */
function callerOfAgent(
  agent: AgentToken,
  agents: AgentAuthentication,
  organizationUri: (id: string) => string,
): OneRecordCaller {
  const organizationId = agentOrganizationId(agent.agentUri, agents.localIdOf);
  if (
    organizationId !== agent.agentUri &&
    !isClientOrganizationId(organizationId) &&
    !CREATED_OBJECT_ID.test(organizationId)
  )
    throw notAnAgent();
  return {
    organizationId,
    organizationUri: organizationId === agent.agentUri ? agent.agentUri : organizationUri(organizationId),
    scopes: agent.scopes,
    agentUri: agent.agentUri,
    agentExpiresAt: agent.expiresAt,
  };
}

/** The id of a logistics object a caller created (a UUID); reference objects have named ids. */
const CREATED_OBJECT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bearerOf(authorization: string): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
}

function isJwtFor(authorization: string): boolean {
  const credential = bearerOf(authorization);
  return credential !== undefined && looksLikeJwt(credential);
}

const isUnknownKey = (error: unknown) => error instanceof AppError && error.code === "UNAUTHENTICATED";

const missingCredentials = () =>
  new AppError("UNAUTHENTICATED", "Send an API key or an access token as Authorization: Bearer <credential>");

const notAnAgent = () =>
  new AppError(
    "UNAUTHENTICATED",
    "The access token's logistics_agent_uri names an object of this server that is neither an API client's Organization nor one a caller created",
  );

const tokensNotTaken = () =>
  new AppError(
    "UNAUTHENTICATED",
    "This server takes API keys only: it has no OIDC issuer configured for access tokens",
  );
