import type { Logger } from "pino";
import type { Prisma } from "../db/database";
import { type BootstrapSettings, ensureBootstrapClient } from "./bootstrap-client";
import { createClientAdmin } from "./client-admin";
import { createKeyAuthentication } from "./key-authentication";
import { prepareSecrets } from "./prepare-secrets";
import type { SecretBox } from "./secret-box";
import { createSigningSecretStore } from "./signing-secret-store";

/**
 * The clients feature as the rest of the gateway sees it: key authentication, administration,
 * signing secrets, the bootstrap client and sealing at start, each from its own module. The one
 * link between them: an administrative change to keys or prefixes empties authentication's cache.
 */
export function createClientService(deps: { prisma: Prisma; log: Logger; secrets: SecretBox }) {
  const authentication = createKeyAuthentication(deps.prisma);
  return {
    authenticate: authentication.authenticate,
    keyStatus: authentication.keyStatus,
    ...createClientAdmin({ ...deps, keysChanged: authentication.forgetAll }),
    ...createSigningSecretStore(deps),
    ensureBootstrapClient: (bootstrap: BootstrapSettings) => ensureBootstrapClient(deps, bootstrap),
    prepareSecrets: () => prepareSecrets(deps),
  };
}

export type ClientService = ReturnType<typeof createClientService>;
