import type { Prisma } from "../../db/database";
import { originOf } from "../../delivery/notification";
import { AppError } from "../../errors";
import { agentOrganizationId, clientOrganizationId } from "../identity/organizations";
import { movePartnerNotifications } from "../sql/partner-move.sql";
import { releaseHeldNotifications } from "../sql/partner-release-held.sql";
import { removePartner } from "../sql/partner-remove.sql";
import { createOneRecordUris } from "../uris";
import { heldEndpointOf, notificationsUrlOf } from "./notification-endpoint";

/** A partner as the operator registered it (table onerecord_partner). */
export interface Partner {
  /** "organization-<client uuid>" for an API client, the URI for an OIDC agent. */
  readonly organization: string;
  /** Its ONE Record server's base URL, without a trailing "/". */
  readonly serverUrl: string;
  readonly clientId: string | null;
  /** Offered publisher-initiated subscriptions (its GET /subscriptions is asked). */
  readonly proposeSubscriptions: boolean;
  /** Told of this server's new AWB objects (LOGISTICS_OBJECT_AVAILABLE). */
  readonly announceObjects: boolean;
  /** The audience of the access tokens it is sent; null: ONE_RECORD_TOKEN_AUDIENCE's (one token for all such). */
  readonly audience: string | null;
  readonly createdAt: Date;
}

export interface NewPartner {
  readonly serverUrl: string;
  /** Exactly one of the two: the API client it is, or its OIDC agent's Organization URI. */
  readonly clientId?: string | undefined;
  readonly agentUri?: string | undefined;
  readonly proposeSubscriptions?: boolean;
  readonly announceObjects?: boolean;
  /** The audience of the tokens it is sent (partner:add --audience); none: ONE_RECORD_TOKEN_AUDIENCE's. */
  readonly audience?: string | undefined;
}

/**
 * The operator's registry of ONE Record partners (npm run admin -- partner:add, partner:remove,
 * partners): where each partner's server is, and what this server offers it unasked. Registering a
 * partner again replaces what was registered.
 */
export function createPartnerAdmin(prisma: Prisma, baseUrl: string | undefined | (() => string | undefined)) {
  // The running gateway's base may be known only once it listens: read at each call.
  const baseOf = typeof baseUrl === "function" ? baseUrl : () => baseUrl;
  const localIdOf = (uri: string) => {
    const base = baseOf();
    return base === undefined ? undefined : createOneRecordUris(() => base).localIdOf(uri);
  };
  const organizationOf = async (partner: { clientId?: string | undefined; agentUri?: string | undefined }) => {
    if ((partner.clientId === undefined) === (partner.agentUri === undefined))
      throw new AppError(
        "VALIDATION_FAILED",
        "Name the partner by its API client or by its agent's URI, one of the two",
      );
    if (partner.clientId !== undefined) {
      const client = /^[0-9a-f-]{36}$/i.test(partner.clientId)
        ? await prisma.client.findUnique({ where: { id: partner.clientId }, select: { id: true } })
        : null;
      if (!client) throw new AppError("CLIENT_NOT_FOUND", `No client ${partner.clientId}`);
      return { organization: clientOrganizationId(client.id), clientId: client.id };
    }
    const agentUri = absoluteHttpUrl(partner.agentUri!, "agent");
    return { organization: agentOrganizationId(agentUri, localIdOf), clientId: null };
  };
  const organizationIdOf = (organization: string) => agentOrganizationId(organization, localIdOf);
  return {
    async add(partner: NewPartner): Promise<Partner> {
      const serverUrl = absoluteHttpUrl(partner.serverUrl, "server").replace(/\/+$/, "");
      const { organization, clientId } = await organizationOf(partner);
      const audience = partner.audience ?? null;
      if (audience !== null && (audience.trim() === "" || audience.length > 1000 || !/^[\x20-\x7e]+$/.test(audience)))
        throw new AppError("VALIDATION_FAILED", "The audience is printable ASCII text of 1 to 1000 characters", {
          errors: [{ field: "audience", message: "not a usable audience" }],
        });
      // One server, one audience: the sender knows a notification's audience by its endpoint's server.
      const other = await prisma.oneRecordPartner.findFirst({
        where: {
          serverUrl,
          organization: { not: organization },
          // SQL's "<>" is never true against NULL: a null audience is another audience, named apart.
          OR: audience === null ? [{ audience: { not: null } }] : [{ audience: null }, { audience: { not: audience } }],
        },
        select: { organization: true, audience: true },
      });
      if (other)
        throw new AppError(
          "VALIDATION_FAILED",
          `The partner ${other.organization} on ${serverUrl} is registered with ` +
            `${other.audience === null ? "no audience" : `the audience ${other.audience}`}: partners on one server share one audience`,
          { errors: [{ field: "audience", message: "another partner on this server has another audience" }] },
        );
      const fields = {
        serverUrl,
        clientId,
        proposeSubscriptions: partner.proposeSubscriptions ?? false,
        announceObjects: partner.announceObjects ?? false,
        audience,
      };
      // Registered on another server: its live subscriptions and what is queued for it move there with
      // the registration, in one transaction (the sender refuses a server no partner is on).
      return prisma.$transaction(async (tx) => {
        const before = await tx.oneRecordPartner.findUnique({ where: { organization }, select: { serverUrl: true } });
        const registered = await tx.oneRecordPartner.upsert({
          where: { organization },
          create: { organization, ...fields },
          update: fields,
        });
        const newEndpoint = notificationsUrlOf(serverUrl);
        await releaseHeldNotifications.rows(tx, {
          organization,
          heldEndpoint: heldEndpointOf(organization),
          newEndpoint,
          newOrigin: originOf(newEndpoint),
        });
        if (before && before.serverUrl !== serverUrl) {
          await movePartnerNotifications.rows(tx, {
            organization,
            oldEndpoint: notificationsUrlOf(before.serverUrl),
            newEndpoint,
            newOrigin: new URL(newEndpoint).origin,
          });
        }
        return registered;
      });
    },
    /**
     * Removes the partner named by its Organization id or URI, or its API client's id, and ends the ONE
     * Record notifications queued for its server (partner-remove.sql.ts); false when there was none.
     * Its subscriptions stay as they are: nothing is sent to a server no partner is on, and failing
     * sends disable them (docs/ONE-RECORD.md "Partner servers").
     */
    async remove(partner: string): Promise<boolean> {
      const organization = /^[0-9a-f-]{36}$/i.test(partner) ? clientOrganizationId(partner) : organizationIdOf(partner);
      const [row] = await removePartner.rows(prisma, { organization });
      return (row?.removed ?? 0) > 0;
    },
    list(): Promise<Partner[]> {
      return prisma.oneRecordPartner.findMany({ orderBy: { createdAt: "asc" } });
    },
  };
}

export type PartnerAdmin = ReturnType<typeof createPartnerAdmin>;

/** A partner server's notifications endpoint (where notifications to its partners go). */

/** An absolute http(s) URL without query, fragment or credentials; refused (VALIDATION_FAILED) otherwise. */
function absoluteHttpUrl(text: string, what: "server" | "agent"): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== "" ||
    url.password !== ""
  )
    throw new AppError("VALIDATION_FAILED", `The ${what} is an absolute http(s) URL without query or fragment`, {
      errors: [{ field: what, message: `"${text}" is not an absolute http(s) URL without query or fragment` }],
    });
  // An agent's URI is its Organization's id as its tokens name it: kept as given, not normalised.
  return what === "agent" ? text : url.href;
}
