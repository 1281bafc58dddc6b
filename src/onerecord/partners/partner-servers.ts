import type { Prisma } from "../../db/database";
import { acceptedThirdPartyEndpoint } from "../sql/third-party-endpoint.sql";

/** A registered partner's server and the audience of the tokens it is sent (onerecord_partner). */
export interface PartnerServer {
  /** Its base URL without a trailing "/" (as partner:add stores it). */
  readonly serverUrl: string;
  readonly audience: string | null;
}

/** How long the registered partners read are used before they are read again. */
export const PARTNER_SERVERS_TTL_MS = 5_000;

/**
 * Which registered partner's server a URL is on, for the senders of notifications: the partner whose
 * server URL is the URL's longest prefix ending at a "/" (or the URL itself). The partners are read
 * all at once (an operator registers few) and used for PARTNER_SERVERS_TTL_MS; a URL found on none
 * makes them be read again at once (one read shared by concurrent callers), so a partner registered a
 * moment ago is found. A partner removed, or its audience changed, is seen within the TTL. Partners on
 * one server registered with different audiences: the longest, then the first registered, wins
 * (partner:add refuses such a registration).
 */
export function createPartnerServers(
  load: () => Promise<readonly PartnerServer[]>,
  { ttlMs = PARTNER_SERVERS_TTL_MS, now = Date.now }: { ttlMs?: number; now?: () => number } = {},
) {
  let cached: { servers: readonly PartnerServer[]; readAt: number } | undefined;
  let reading: Promise<readonly PartnerServer[]> | undefined;
  const read = () =>
    (reading ??= load().then(
      (servers) => {
        reading = undefined;
        // Longest first: a server under another's path is that server, not the other.
        const sorted = [...servers].sort((a, b) => b.serverUrl.length - a.serverUrl.length);
        cached = { servers: sorted, readAt: now() };
        return sorted;
      },
      (error: unknown) => {
        reading = undefined;
        throw error;
      },
    ));
  const find = (servers: readonly PartnerServer[], url: string) =>
    servers.find((s) => url === s.serverUrl || url.startsWith(`${s.serverUrl}/`));
  return {
    /**
     * `rereadOnMiss` false: a URL on no partner of a fresh read is answered from it, not read again
     * (for a caller that has another answer to try first).
     */
    async partnerOf(url: string, { rereadOnMiss = true } = {}): Promise<PartnerServer | undefined> {
      const fresh = cached !== undefined && now() - cached.readAt < ttlMs;
      if (fresh && !rereadOnMiss) return find(cached!.servers, url);
      const found = fresh ? find(cached!.servers, url) : undefined;
      return found ?? find(await read(), url);
    },
  };
}

export type PartnerServers = ReturnType<typeof partnerServersOf>;

/** Where a notification may be sent: `anonymous` when no token goes with it. */
export interface NotificationTarget {
  readonly audience: string | null;
  readonly anonymous: boolean;
}

/**
 * The registered partners' servers, oldest registration first, read through Prisma; and `targetOf`,
 * the senders' question: a registered partner's server (tokens of its audience), else the endpoint of
 * a live third-party subscription its topic's holder accepted (anonymous: no token goes to a server
 * the operator did not register), else none.
 */
export function partnerServersOf(prisma: Pick<Prisma, "oneRecordPartner" | "$queryRawUnsafe">) {
  const servers = createPartnerServers(() =>
    prisma.oneRecordPartner.findMany({ select: { serverUrl: true, audience: true }, orderBy: { createdAt: "asc" } }),
  );
  return {
    ...servers,
    async targetOf(url: string): Promise<NotificationTarget | undefined> {
      const asPartner = (p: PartnerServer | undefined) => p && { audience: p.audience, anonymous: false };
      // An accepted third party's endpoint is asked before the partners are read again: each send to
      // it costs one lookup, not a read of every partner.
      const partner = await servers.partnerOf(url, { rereadOnMiss: false });
      if (partner !== undefined) return asPartner(partner);
      const [row] = await acceptedThirdPartyEndpoint.rows(prisma, { endpoint: url });
      if (row?.accepted) return { audience: null, anonymous: true };
      return asPartner(await servers.partnerOf(url));
    },
  };
}
