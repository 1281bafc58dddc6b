import { apiErrorTitle } from "../api-error";
import { CARRIER_ORGANIZATION_ID, organizationUriOf } from "../identity/organizations";
import { API, XSD } from "../jsonld-context";
import type { NodeObject } from "../jsonld-tree";
import type { ApiVersion } from "../negotiation";
import type { AccessDelegationRow } from "../sql/delegation-columns";
import type { OneRecordUris } from "../uris";
import { MAY_BE_PASSED_ON } from "./access-delegation";

export const ACCESS_DELEGATION_REQUEST = `${API}AccessDelegationRequest`;

/**
 * An AccessDelegationRequest as expanded JSON-LD, for the routes to compact: its AccessDelegation as
 * stored, its status and since when, who asked and when, the status it left (2.3.0; decided on
 * arrival, a request was pending only while it was decided), who revoked it, and the api:Error saying
 * why it was rejected. The nodes it adds get ids derived from the request's, so they never change.
 */
export function delegationRequestNode(row: AccessDelegationRow, uris: OneRecordUris, version: ApiVersion): NodeObject {
  const organization = (id: string) => [{ "@id": organizationUriOf(id, (local) => uris.objectUri(local)) }];
  const time = (at: Date) => [{ "@value": at.toISOString(), "@type": `${XSD}dateTime` }];
  const status = (name: string) => [{ "@id": `${API}${name}` }];
  const since = row.decided_at ?? row.requested_at;
  const node: NodeObject = {
    "@id": uris.actionRequestUri(row.id),
    "@type": [ACCESS_DELEGATION_REQUEST],
    [`${API}hasAccessDelegation`]: [delegationNode(row, uris)],
    [`${API}hasRequestStatus`]: status(row.status),
    [`${API}isRequestedAt`]: time(row.requested_at),
    [`${API}isRequestedBy`]: organization(row.requested_by),
  };
  if (version !== "2.2.0") {
    node[`${API}hasRequestStatusSince`] = time(since);
    node[`${API}hasRequestStatusHistory`] = historyOf(row).map((entry, i) => ({
      "@id": `internal:${row.id}-status-${i + 1}`,
      "@type": [`${API}RequestStatusEntry`],
      [`${API}hasRequestStatus`]: status(entry.status),
      [`${API}hasRequestStatusSince`]: time(entry.since),
      ...(entry.changedBy ? { [`${API}isChangedBy`]: organization(entry.changedBy) } : {}),
    }));
  }
  if (row.status === "REQUEST_REVOKED" && row.decided_at && row.decided_by) {
    node[`${API}isRevokedAt`] = time(row.decided_at);
    node[`${API}isRevokedBy`] = organization(row.decided_by);
  }
  if (row.reason !== null && row.error_status !== null)
    node[`${API}hasError`] = [
      {
        "@id": `internal:${row.id}-error`,
        "@type": [`${API}Error`],
        [`${API}hasTitle`]: [{ "@value": apiErrorTitle("ACCESS_DENIED", row.error_status, "Access not delegated") }],
        [`${API}hasErrorDetail`]: [
          {
            "@id": `internal:${row.id}-error-detail`,
            "@type": [`${API}ErrorDetail`],
            [`${API}hasCode`]: [{ "@value": String(row.error_status) }],
            [`${API}hasMessage`]: [{ "@value": row.reason }],
            [`${API}hasResource`]: [{ "@value": uris.actionRequestUri(row.id), "@type": `${XSD}anyURI` }],
          },
        ],
      },
    ];
  return node;
}

/** The api:AccessDelegation as asked for, with absolute URIs. */
function delegationNode(row: AccessDelegationRow, uris: OneRecordUris): NodeObject {
  const node: NodeObject = {
    "@id": `internal:${row.id}-delegation`,
    "@type": [`${API}AccessDelegation`],
    [`${API}hasLogisticsObject`]: row.objects.map((id) => ({ "@id": uris.objectUri(id) })),
    [`${API}isRequestedFor`]: row.organizations.map((id) => ({
      "@id": organizationUriOf(id, (local) => uris.objectUri(local)),
    })),
    [`${API}hasPermission`]: row.permissions.map((name) => ({ "@id": `${API}${name}` })),
    [`${API}notifyRequestStatusChange`]: [{ "@value": row.notify_status_change }],
  };
  if (row.expires_at) node[`${API}expiresAt`] = [{ "@value": row.expires_at.toISOString(), "@type": `${XSD}dateTime` }];
  const description = (row.delegation as NodeObject)[`${API}hasDescription`];
  if (Array.isArray(description) && description.length > 0) node[`${API}hasDescription`] = description;
  const passOn = (row.delegation as NodeObject)[MAY_BE_PASSED_ON];
  if (Array.isArray(passOn) && passOn.length > 0) node[MAY_BE_PASSED_ON] = passOn;
  return node;
}

/**
 * The statuses a request had before its current one. Decided on arrival, every request was pending,
 * and left that status the moment it was stored, by the holder's policy (the carrier, decided_by at
 * insert); a revoked one was accepted until its revocation, which `decided_by` then names.
 */
function historyOf(row: AccessDelegationRow): Array<{ status: string; since: Date; changedBy: string | null }> {
  const decider = row.status === "REQUEST_REVOKED" ? DECIDED_ON_ARRIVAL_BY : row.decided_by;
  const history = [{ status: "REQUEST_PENDING", since: row.requested_at, changedBy: decider }];
  if (row.status === "REQUEST_REVOKED")
    history.push({ status: "REQUEST_ACCEPTED", since: row.requested_at, changedBy: row.decided_by });
  return history;
}

/** Who decides a delegation on arrival: the data holder's policy, the carrier's Organization. */
export const DECIDED_ON_ARRIVAL_BY = CARRIER_ORGANIZATION_ID;
