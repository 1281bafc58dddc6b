import { apiErrorTitle } from "../api-error";
import { organizationUriOf } from "../identity/organizations";
import { API, XSD } from "../jsonld-context";
import { isLocalId, mapIds, type NodeObject, valuesOf } from "../jsonld-tree";
import { MAX_CHANGE_OPERATIONS } from "./change-bounds";
import type { ApiVersion } from "../negotiation";
import type { ActionRequestRow } from "../sql/action-request-columns";
import type { OneRecordUris } from "../uris";

/**
 * An action request (a ChangeRequest) as expanded JSON-LD, for the routes to compact: its Change, its
 * current status and since when, who asked and when, its earlier status (2.3.0), who revoked it, and
 * an api:Error when it failed or was superseded. The nodes it adds get ids derived from the request's,
 * so they never change.
 */
export function actionRequestNode(row: ActionRequestRow, uris: OneRecordUris, version: ApiVersion): NodeObject {
  const uri = uris.actionRequestUri(row.id);
  const organization = (id: string) => [{ "@id": organizationUriOf(id, (local) => uris.objectUri(local)) }];
  const time = (at: Date) => [{ "@value": at.toISOString(), "@type": `${XSD}dateTime` }];
  const status = (name: string) => [{ "@id": `${API}${name}` }];
  const since = row.decided_at ?? row.requested_at;
  const node: NodeObject = {
    "@id": uri,
    "@type": [`${API}ChangeRequest`],
    [`${API}hasChange`]: [
      mapIds(withinChangeBounds(row.request), (id) => (isLocalId(id) ? uris.objectUri(id) : undefined)),
    ],
    [`${API}hasRequestStatus`]: status(row.status),
    [`${API}isRequestedAt`]: time(row.requested_at),
    [`${API}isRequestedBy`]: organization(row.requested_by),
  };
  if (version !== "2.2.0") {
    node[`${API}hasRequestStatusSince`] = time(since);
    if (row.decided_at)
      node[`${API}hasRequestStatusHistory`] = [
        {
          "@id": `internal:${row.id}-status-1`,
          "@type": [`${API}RequestStatusEntry`],
          [`${API}hasRequestStatus`]: status("REQUEST_PENDING"),
          [`${API}hasRequestStatusSince`]: time(row.requested_at),
          ...(row.decided_by ? { [`${API}isChangedBy`]: organization(row.decided_by) } : {}),
        },
      ];
  }
  if (row.status === "REQUEST_REVOKED" && row.decided_at && row.decided_by) {
    node[`${API}isRevokedAt`] = time(row.decided_at);
    node[`${API}isRevokedBy`] = organization(row.decided_by);
  }
  if (row.reason !== null && row.error_status !== null) {
    node[`${API}hasError`] = [
      {
        "@id": `internal:${row.id}-error`,
        "@type": [`${API}Error`],
        [`${API}hasTitle`]: [{ "@value": errorTitle(row.error_status) }],
        [`${API}hasErrorDetail`]: [
          {
            "@id": `internal:${row.id}-error-detail`,
            "@type": [`${API}ErrorDetail`],
            [`${API}hasCode`]: [{ "@value": String(row.error_status) }],
            [`${API}hasMessage`]: [{ "@value": row.reason }],
            [`${API}hasResource`]: [{ "@value": uris.objectUri(row.object_id), "@type": `${XSD}anyURI` }],
          },
        ],
      },
    ];
  }
  return node;
}

/**
 * The stored Change within what a Change may hold now (MAX_CHANGE_OPERATIONS, one api:o each): a row
 * written under looser rules costs a reader no more than a new one.
 */
function withinChangeBounds(change: NodeObject): NodeObject {
  const operations = change[HAS_OPERATION];
  if (!Array.isArray(operations)) return change;
  const fits =
    operations.length <= MAX_CHANGE_OPERATIONS && operations.every((op: NodeObject) => valuesOf(op, API_O).length <= 1);
  if (fits) return change;
  return {
    ...change,
    [HAS_OPERATION]: operations
      .slice(0, MAX_CHANGE_OPERATIONS)
      .map((op: NodeObject) => ({ ...op, [API_O]: valuesOf(op, API_O).slice(0, 1) })),
  };
}

const HAS_OPERATION = `${API}hasOperation`;
const API_O = `${API}o`;

function errorTitle(status: number): string {
  return status === 409
    ? "Conflict with Logistics Object revision number"
    : apiErrorTitle("CHANGE_UNPROCESSABLE", status, "The change cannot be applied");
}

/**
 * The api:AuditTrail of an object: its latest revision, and its change requests, each referred to by its
 * URI in `trail` and given whole in `requests` (same order), for the route to compact one at a time.
 */
export function auditTrailNodes(
  objectId: string,
  rows: readonly ActionRequestRow[],
  latestRevision: number,
  uris: OneRecordUris,
  version: ApiVersion,
): { trail: NodeObject; requests: NodeObject[] } {
  const requests = rows.map((row) => actionRequestNode(row, uris, version));
  const trail: NodeObject = {
    "@id": `${uris.objectUri(objectId)}/audit-trail`,
    "@type": [`${API}AuditTrail`],
    ...(requests.length > 0 ? { [`${API}hasActionRequest`]: requests.map((node) => ({ "@id": node["@id"] })) } : {}),
    [`${API}hasLatestRevision`]: [{ "@value": String(latestRevision), "@type": `${XSD}positiveInteger` }],
  };
  return { trail, requests };
}
