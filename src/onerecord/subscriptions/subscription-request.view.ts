import { apiErrorTitle } from "../api-error";
import { CARRIER_ORGANIZATION_ID, organizationUriOf } from "../identity/organizations";
import { API, XSD } from "../jsonld-context";
import { isLocalId, mapIds, type NodeObject } from "../jsonld-tree";
import type { ApiVersion } from "../negotiation";
import type { SubscriptionRequestRow } from "../sql/subscription-request-columns";
import type { OneRecordUris } from "../uris";

const term = (name: string) => `${API}${name}`;
export const SUBSCRIPTION_REQUEST = term("SubscriptionRequest");

/**
 * A SubscriptionRequest as expanded JSON-LD, for the routes to compact (the specification's
 * SubscriptionRequest_example.json): its Subscription, current status and since when, who asked and
 * when, its earlier statuses (2.3.0), who revoked it, and the api:Error saying why it was rejected.
 * The nodes it adds are named after the request, so they never change.
 */
export function subscriptionRequestNode(
  row: SubscriptionRequestRow,
  uris: OneRecordUris,
  version: ApiVersion,
): NodeObject {
  const uri = uris.actionRequestUri(row.id);
  const organization = (id: string) => [{ "@id": organizationUriOf(id, (local) => uris.objectUri(local)) }];
  const time = (at: Date) => [{ "@value": at.toISOString(), "@type": `${XSD}dateTime` }];
  const status = (name: string) => [{ "@id": term(name) }];
  const failed = failedAt(row);
  const node: NodeObject = {
    "@id": uri,
    "@type": [SUBSCRIPTION_REQUEST],
    [term("hasSubscription")]: [subscriptionNode(row, uris)],
    [term("hasRequestStatus")]: status(failed ? "REQUEST_FAILED" : row.status),
    [term("isRequestedAt")]: time(row.requested_at),
    [term("isRequestedBy")]: organization(row.requested_by),
  };
  if (version !== "2.2.0") {
    node[term("hasRequestStatusSince")] = time(statusSince(row));
    const history = statusHistory(row).map((entry, i) => ({
      "@id": `internal:${row.id}-status-${i + 1}`,
      "@type": [term("RequestStatusEntry")],
      [term("hasRequestStatus")]: status(entry.status),
      [term("hasRequestStatusSince")]: time(entry.since),
      [term("isChangedBy")]: organization(entry.changedBy),
    }));
    if (history.length > 0) node[term("hasRequestStatusHistory")] = history;
  }
  if (row.status === "REQUEST_REVOKED" && row.decided_at && row.decided_by) {
    node[term("isRevokedAt")] = time(row.decided_at);
    node[term("isRevokedBy")] = organization(row.decided_by);
  }
  if (failed)
    node[term("hasError")] = [
      {
        "@id": `internal:${row.id}-error`,
        "@type": [term("Error")],
        [term("hasTitle")]: [{ "@value": "Notifications could not be delivered" }],
        [term("hasErrorDetail")]: [
          {
            "@id": `internal:${row.id}-error-detail`,
            "@type": [term("ErrorDetail")],
            [term("hasCode")]: [{ "@value": String(DELIVERY_FAILED_CODE) }],
            [term("hasMessage")]: [
              {
                "@value":
                  `${row.disabled_reason ?? "its notifications kept failing"}: notifications are held until the ` +
                  "server's operator enables the subscription again",
              },
            ],
            [term("hasResource")]: [{ "@value": row.endpoint, "@type": `${XSD}anyURI` }],
          },
        ],
      },
    ];
  else if (row.reason !== null && row.error_status !== null)
    node[term("hasError")] = [
      {
        "@id": `internal:${row.id}-error`,
        "@type": [term("Error")],
        [term("hasTitle")]: [{ "@value": apiErrorTitle("ACCESS_DENIED", row.error_status, "Subscription refused") }],
        [term("hasErrorDetail")]: [
          {
            "@id": `internal:${row.id}-error-detail`,
            "@type": [term("ErrorDetail")],
            [term("hasCode")]: [{ "@value": String(row.error_status) }],
            [term("hasMessage")]: [{ "@value": row.reason }],
            [term("hasResource")]: [{ "@value": topicUri(row, uris), "@type": `${XSD}anyURI` }],
          },
        ],
      },
    ];
  return node;
}

/** api:hasCode of a disabled subscription's error: the subscriber's server, as a gateway, kept failing. */
const DELIVERY_FAILED_CODE = 502;

/**
 * When delivery disabled an accepted request (its notifications kept failing for
 * DELIVERY_DISABLE_AFTER_HOURS): it then reads REQUEST_FAILED since then, with the reason, as the
 * specification has errors on an accepted request read; the operator's enable makes it read accepted
 * again. Undefined while it is enabled or not accepted.
 */
export function failedAt(row: Pick<SubscriptionRequestRow, "status" | "disabled_at">): Date | undefined {
  return row.status === "REQUEST_ACCEPTED" && row.disabled_at !== null ? row.disabled_at : undefined;
}

/**
 * Since when its current status applies (and its Last-Modified): delivery's disable (read as failed),
 * an operator's enable after one, or the decision.
 */
export function statusSince(
  row: Pick<SubscriptionRequestRow, "status" | "disabled_at" | "reenabled_at" | "decided_at" | "requested_at">,
): Date {
  const reenabled = row.status === "REQUEST_ACCEPTED" ? row.reenabled_at : null;
  return failedAt(row) ?? reenabled ?? row.decided_at ?? row.requested_at;
}

/** The api:Subscription as accepted, with this server's URIs made from its local ids. */
function subscriptionNode(row: SubscriptionRequestRow, uris: OneRecordUris): NodeObject {
  const stored = mapIds(row.subscription, (id) => (isLocalId(id) ? uris.objectUri(id) : undefined));
  return {
    ...stored,
    [term("hasSubscriber")]: [{ "@id": organizationUriOf(row.subscriber, (local) => uris.objectUri(local)) }],
    [term("hasTopic")]: [{ "@value": topicUri(row, uris), "@type": `${XSD}anyURI` }],
  };
}

function topicUri(row: SubscriptionRequestRow, uris: OneRecordUris): string {
  return row.topic_type === "LOGISTICS_OBJECT_IDENTIFIER" ? uris.objectUri(row.topic) : row.topic;
}

/**
 * The statuses before the current one. A request decided on arrival was pending for no time and was
 * decided by the holder's policy (the carrier); a revoked one was accepted (or pending) until then.
 */
function statusHistory(row: SubscriptionRequestRow): Array<{ status: string; since: Date; changedBy: string }> {
  if (row.status === "REQUEST_PENDING" || row.decided_at === null) return [];
  if (waitedForHolder(row)) return heldHistory(row);
  const decider = row.initiated_by === "PUBLISHER" ? row.subscriber : CARRIER_ORGANIZATION_ID;
  // A disable the operator undid: failed from then until it was enabled again (by the carrier's operator).
  const undone =
    row.reenabled_at !== null && row.last_failed_at !== null
      ? [
          { status: "REQUEST_FAILED", since: row.last_failed_at, changedBy: CARRIER_ORGANIZATION_ID },
          { status: "REQUEST_ACCEPTED", since: row.reenabled_at, changedBy: CARRIER_ORGANIZATION_ID },
        ]
      : [];
  const accepted = [
    { status: "REQUEST_PENDING", since: row.requested_at, changedBy: decider },
    { status: "REQUEST_ACCEPTED", since: row.requested_at, changedBy: decider },
  ];
  if (failedAt(row) !== undefined) return [...accepted, ...undone];
  if (row.status !== "REQUEST_REVOKED")
    return undone.length === 0 ? accepted.slice(0, 1) : [...accepted, ...undone.slice(0, 1)];
  const revoker = row.decided_by ?? decider;
  // Revoked from pending or accepted: rejected ones are not revocable. Accepted on arrival, at requested_at.
  return [
    { status: "REQUEST_PENDING", since: row.requested_at, changedBy: decider },
    { status: "REQUEST_ACCEPTED", since: row.requested_at, changedBy: revoker },
    ...undone,
  ];
}

/** A third party's request: pending from its arrival until the topic's holder decided. */
function waitedForHolder(row: SubscriptionRequestRow): boolean {
  return row.initiated_by === "SUBSCRIBER" && row.subscriber !== row.requested_by;
}

/**
 * The statuses before the current one of a request that waited for the holder: pending since it was
 * asked for; accepted when and by whom the holder accepted it (then failed and enabled again as
 * delivery and the operator did); a rejection or a revocation is the current status.
 */
function heldHistory(row: SubscriptionRequestRow): Array<{ status: string; since: Date; changedBy: string }> {
  const pending = { status: "REQUEST_PENDING", since: row.requested_at, changedBy: row.requested_by };
  if (row.accepted_at === null || row.accepted_by === null) return [pending];
  const accepted = { status: "REQUEST_ACCEPTED", since: row.accepted_at, changedBy: row.accepted_by };
  const undone =
    row.reenabled_at !== null && row.last_failed_at !== null
      ? [
          { status: "REQUEST_FAILED", since: row.last_failed_at, changedBy: CARRIER_ORGANIZATION_ID },
          { status: "REQUEST_ACCEPTED", since: row.reenabled_at, changedBy: CARRIER_ORGANIZATION_ID },
        ]
      : [];
  if (failedAt(row) !== undefined) return [pending, accepted, ...undone];
  if (row.status === "REQUEST_ACCEPTED") return undone.length === 0 ? [pending] : [pending, accepted, undone[0]!];
  return [pending, accepted, ...undone];
}
