import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../errors";
import type { OneRecordCaller } from "../identity/caller";
import { canCreate, canRead } from "../identity/access-policy";
import { CARRIER_ORGANIZATION_ID } from "../identity/organizations";
import { compactJsonLd, readJsonLdObject } from "../jsonld-codec";
import { API, CARGO } from "../jsonld-context";
import { apiVersionOf, jsonLdBodyOf, oneRecordCallerOf, sendCreated, sendJsonLd } from "../onerecord-http";
import { type OneRecordUris, awbOfAlias, waybillIdOf } from "../uris";
import { auditTrailNodes } from "./action-request.view";
import { compactAuditTrail } from "./audit-trail.answer";
import { readChange } from "./change";
import type { ObjectService } from "./objects.service";
import { parseQueryTime, parseStatuses, queryOf } from "../query";

interface ObjectRouteDeps {
  readonly objects: ObjectService;
  readonly uris: OneRecordUris;
}

type WithId = FastifyRequest<{ Params: { id: string } }>;

/** Logistics objects: create, read (at a time, embedded), HEAD, change requests, audit trail. */
export function registerObjectRoutes(scope: FastifyInstance, { objects, uris }: ObjectRouteDeps): void {
  // Who may write is checked before the body is read: reading JSON-LD is the costly part of a request.
  scope.post("/logistics-objects", async (request, reply) => {
    const caller = oneRecordCallerOf(request);
    if (!canCreate(caller))
      throw new AppError("INSUFFICIENT_SCOPE", "Creating logistics objects takes the objects:write scope");
    const root = await readJsonLdObject(jsonLdBodyOf(request));
    const created = await objects.create(caller, root);
    reply.header("revision", String(created.revision));
    return sendCreated(reply, uris.objectUri(created.id), created.type);
  });

  const answerObject = async (request: WithId, reply: FastifyReply) => {
    const { id } = request.params;
    const query = queryOf(request);
    const alias = awbOfAlias(id);
    if (alias !== undefined) {
      // Before looking the AWB up: a caller who may not read its Waybill learns nothing of whether it exists.
      if (!canRead(oneRecordCallerOf(request), awbWaybillMeta(alias)))
        throw new AppError("ACCESS_DENIED", `You may not read ${uris.objectUri(id)}`, {
          extensions: { resource: uris.objectUri(id) },
        });
      const waybill = await objects.waybillOfAwb(alias);
      const search = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : "";
      return reply
        .code(307)
        .header("location", `${uris.objectUri(waybill)}${search}`)
        .send();
    }
    const embedded = parseEmbedded(query.embedded);
    const at = parseQueryTime(query.at, "at", { notAfterNow: true });
    const state = await objects.read(oneRecordCallerOf(request), id, {
      ...(at ? { at: at.endOfSecond, atText: at.text } : {}),
      embedded,
    });
    reply
      .header("location", `${uris.objectUri(id)}${at ? `?at=${at.text}` : ""}`)
      .header("type", state.type)
      .header("revision", String(state.revision))
      .header("latest-revision", String(state.latestRevision))
      .header("last-modified", state.lastModified.toUTCString());
    return sendJsonLd(reply, 200, await compactJsonLd(state.body));
  };
  scope.get<{ Params: { id: string } }>("/logistics-objects/:id", answerObject);

  scope.patch<{ Params: { id: string } }>("/logistics-objects/:id", async (request, reply) => {
    const caller = oneRecordCallerOf(request);
    await checkReadable(caller, request.params.id);
    const root = await readJsonLdObject(jsonLdBodyOf(request));
    const change = readChange(root);
    const row = await objects.requestChange(caller, request.params.id, change);
    return sendCreated(reply, uris.actionRequestUri(row.id), `${API}ChangeRequest`);
  });

  /** A change request is only taken on an object the caller may read (objects.service.ts says so again). */
  const checkReadable = async (caller: OneRecordCaller, id: string): Promise<void> => {
    const meta = await objects.metaOf(id, caller.organizationId);
    const resource = { extensions: { resource: uris.objectUri(id) } };
    if (meta === undefined)
      throw new AppError("LOGISTICS_OBJECT_NOT_FOUND", `No logistics object ${uris.objectUri(id)}`, resource);
    if (!canRead(caller, meta)) throw new AppError("ACCESS_DENIED", `You may not read ${uris.objectUri(id)}`, resource);
  };

  scope.get<{ Params: { id: string } }>("/logistics-objects/:id/audit-trail", async (request, reply) => {
    const query = queryOf(request);
    const from = parseQueryTime(query["updated-from"], "updated-from");
    const to = parseQueryTime(query["updated-to"], "updated-to");
    const trail = await objects.auditTrail(oneRecordCallerOf(request), request.params.id, {
      from: from?.date ?? null,
      to: to?.endOfSecond ?? null,
      statuses: parseStatuses(query.status),
    });
    const nodes = auditTrailNodes(request.params.id, trail.requests, trail.latestRevision, uris, apiVersionOf(request));
    return sendJsonLd(reply, 200, await compactAuditTrail(nodes.trail, nodes.requests));
  });
}

/** An AWB's Waybill as the access rules see it before it is looked up: the carrier's, with its AWB. */
function awbWaybillMeta(awb: string) {
  return { id: waybillIdOf(awb), type: `${CARGO}Waybill`, awb, createdBy: CARRIER_ORGANIZATION_ID };
}

function parseEmbedded(value: string | undefined): boolean {
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw new AppError("INVALID_QUERY_PARAMETER", `embedded is true or false, got ${JSON.stringify(value)}`, {
    errors: [{ field: "embedded", message: "is true or false" }],
  });
}
