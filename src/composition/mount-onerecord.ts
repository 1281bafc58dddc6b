import type { FastifyInstance } from "fastify";
import type { Principal } from "../clients/principal";
import type { Config } from "../config";
import { listeningUrl } from "../http/listening-url";
import { createOneRecordCallers } from "../onerecord/identity/caller";
import { registerOneRecordRoutes } from "../onerecord/onerecord.routes";
import { createOneRecordUris } from "../onerecord/uris";

/**
 * The ONE Record API (docs/ONE-RECORD.md) on `http`: its URIs start with ONE_RECORD_BASE_URL or, when
 * unset, this server's listening URL and base path (asked per request: known only once it listens).
 */
export async function mountOneRecord(
  http: FastifyInstance,
  config: Config,
  authenticateApiKey: (authorization: string | undefined, address: string) => Promise<Principal | null>,
): Promise<void> {
  const { basePath, baseUrl } = config.oneRecord;
  const uris = createOneRecordUris(() => baseUrl ?? `${listeningUrl(http.server)}${basePath}`);
  const callers = createOneRecordCallers({ authenticateApiKey, organizationUri: (id) => uris.objectUri(id) });
  await registerOneRecordRoutes(http, { basePath, uris, callers });
}
