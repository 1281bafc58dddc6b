import type { FastifyInstance } from "fastify";
import { sendJsonLd } from "./onerecord-http";
import { serverInformationBody } from "./server-information";
import type { OneRecordUris } from "./uris";

export function registerServerInformationRoutes(scope: FastifyInstance, deps: { uris: OneRecordUris }): void {
  // What the server information says changes only with a new version of the gateway: its start.
  const lastModified = new Date().toUTCString();
  scope.get("/", async (_request, reply) =>
    sendJsonLd(reply.header("last-modified", lastModified), 200, serverInformationBody(deps.uris)),
  );
}
