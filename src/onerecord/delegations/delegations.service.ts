import { randomUUID } from "node:crypto";
import type { Prisma } from "../../db/database";
import { AppError } from "../../errors";
import { canRead, canWrite, type ObjectMeta } from "../identity/access-policy";
import type { OneRecordCaller } from "../identity/caller";
import { clientIdOfOrganizationId } from "../identity/organizations";
import { mapIds, type NodeObject } from "../jsonld-tree";
import type { AccessDelegationRow } from "../sql/delegation-columns";
import { lockDelegationObjects } from "../sql/delegation-objects-lock.sql";
import { grantDelegation } from "../sql/delegation-grant.sql";
import { insertDelegation } from "../sql/delegation-insert.sql";
import { delegationsRejectedRecently } from "../sql/delegations-rejected-recently.sql";
import { readDelegation } from "../sql/delegation-read.sql";
import { revokeDelegation } from "../sql/delegation-revoke.sql";
import { withdrawDelegation } from "../sql/delegation-withdraw.sql";
import { revokeChainedDelegations } from "../sql/delegations-chain-revoke.sql";
import type { OneRecordUris } from "../uris";
import type { AccessDelegation, Permission } from "./access-delegation";
import { DECIDED_ON_ARRIVAL_BY } from "./delegation.view";

/** Rejected access delegations one requester may have stored in 24 hours; beyond, refused (429), nothing stored. */
export const MAX_REJECTED_DELEGATIONS_PER_DAY = 100;

/** A transaction's client: what the statements and the outbox take. */
type Tx = Pick<Prisma, "$queryRawUnsafe">;

/** An ACCESS_DELEGATION_REQUEST_* notification for the requester (notifications-out's shape). */
export interface DelegationStatusNotification {
  readonly to: { readonly endpoint: string; readonly clientId: string | null; readonly subscriptionId: null };
  readonly content: {
    readonly eventType: `ACCESS_DELEGATION_REQUEST_${"ACCEPTED" | "REJECTED" | "REVOKED"}`;
    readonly logisticsObject?: string;
    readonly logisticsObjectType?: string;
    readonly triggeredBy: string;
  };
}

export interface DelegationServiceDeps {
  readonly prisma: Prisma;
  readonly uris: OneRecordUris;
  /** objects.service metaOf: an object's access facts (an AWB's skeletons written on first use); undefined for none. */
  objectMeta(id: string): Promise<ObjectMeta | undefined>;
  /**
   * Where notifications to an Organization go (partners/notification-endpoint.ts); undefined when none is
   * known: the status change is then not notified. Without it, none is.
   */
  endpointOf?(tx: Tx, organizationId: string): Promise<string | undefined>;
  /** notifications-out queueOneRecordNotifications: queues them in the caller's transaction. */
  queueNotifications?(tx: Tx, notifications: readonly DelegationStatusNotification[]): Promise<unknown>;
}

const READ_PERMISSIONS: readonly Permission[] = ["GET_LOGISTICS_OBJECT", "GET_LOGISTICS_EVENT"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A stored object as the access rules see it, with its active grants (delegation-objects-lock). */
interface LockedObject {
  readonly id: string;
  readonly type: string;
  readonly awb: string | null;
  readonly created_by: string;
  readonly readers: string[];
}

const metaOf = (row: LockedObject): ObjectMeta => ({
  id: row.id,
  type: row.type,
  awb: row.awb,
  createdBy: row.created_by,
  readers: row.readers,
});

/**
 * Access delegations (docs/ONE-RECORD.md "Access delegations"): an Organization asks this server to let
 * another read logistics objects; the holder's policy decides at once. Accepted: read grants for the
 * delegate in logistics_object_grant, in the same transaction, expiring with the delegation; revoked:
 * those grants withdrawn with everything passed on from them (the trust chain), in one transaction.
 */
export function createDelegationService(deps: DelegationServiceDeps) {
  const { prisma, uris } = deps;

  const actionRequestError = (code: "ACCESS_DENIED" | "ACTION_REQUEST_DECIDED", id: string, message: string) =>
    new AppError(code, message, { extensions: { resource: uris.actionRequestUri(id) } });

  /**
   * Why the holder's policy refuses the delegation; undefined when it accepts it. This server delegates
   * reading only, and only an Organization that may read an object (its creator, an AWB's reader, or a
   * delegate itself: the trust chain) may pass that on.
   */
  function refusal(caller: OneRecordCaller, delegation: AccessDelegation, locked: readonly LockedObject[]) {
    const writes = delegation.permissions.filter((p) => !READ_PERMISSIONS.includes(p));
    if (writes.length > 0)
      return `This server delegates reading only (api:GET_LOGISTICS_OBJECT, api:GET_LOGISTICS_EVENT); it does not delegate ${writes.map((p) => `api:${p}`).join(", ")}`;
    if (!delegation.permissions.includes("GET_LOGISTICS_OBJECT"))
      return "This server delegates reading a logistics object and its events together: ask for api:GET_LOGISTICS_OBJECT";
    const byId = new Map(locked.map((row) => [row.id, row]));
    for (const id of delegation.objects) {
      const row = byId.get(id);
      if (!row)
        return `${uris.objectUri(id)} is the carrier's reference data, readable by every authenticated caller: there is nothing to delegate`;
      if (!canRead(caller, metaOf(row)))
        return `You may not read ${uris.objectUri(id)}: only its holder, or an Organization that may read it, delegates access to it`;
    }
    return undefined;
  }

  /** The status notifications of these requests for their requesters, when asked for and an endpoint is known. */
  async function notifyStatus(
    tx: Tx,
    rows: readonly AccessDelegationRow[],
    objectType?: (id: string) => string | undefined,
  ) {
    if (!deps.queueNotifications || !deps.endpointOf) return;
    const notifications: DelegationStatusNotification[] = [];
    for (const row of rows) {
      if (!row.notify_status_change) continue;
      const endpoint = await deps.endpointOf(tx, row.requested_by);
      if (endpoint === undefined) continue;
      // A Notification names at most one logistics object: the delegation's when it has one.
      const [only] = row.objects.length === 1 ? row.objects : [];
      const type = only === undefined ? undefined : objectType?.(only);
      notifications.push({
        to: { endpoint, clientId: clientIdOfOrganizationId(row.requested_by) ?? null, subscriptionId: null },
        content: {
          eventType: `ACCESS_DELEGATION_${row.status as "REQUEST_ACCEPTED" | "REQUEST_REJECTED" | "REQUEST_REVOKED"}`,
          ...(only === undefined ? {} : { logisticsObject: uris.objectUri(only) }),
          ...(type === undefined ? {} : { logisticsObjectType: type }),
          triggeredBy: uris.actionRequestUri(row.id),
        },
      });
    }
    if (notifications.length > 0) await deps.queueNotifications(tx, notifications);
  }

  /** The request when this kind holds `id`; undefined for any other id. */
  async function held(id: string): Promise<AccessDelegationRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return (await readDelegation.rows(prisma, { id }))[0];
  }

  /** Whether the caller holds one of the request's objects (may write it): it may revoke the request. */
  async function holdsAnObject(caller: OneRecordCaller, row: AccessDelegationRow): Promise<boolean> {
    for (const id of row.objects) {
      const meta = await deps.objectMeta(id);
      if (meta && canWrite(caller, meta)) return true;
    }
    return false;
  }

  /**
   * Its requester, its delegate and the holders of its objects see a request; anyone else gets 403.
   * Answers whether the caller is the requester, and whether it holds one of the objects (looked up
   * only when that decides something).
   */
  async function visible(caller: OneRecordCaller, row: AccessDelegationRow, needHolder: boolean) {
    const requester = row.requested_by === caller.organizationId;
    const own = requester || row.organizations.includes(caller.organizationId);
    const holder = own && !needHolder ? false : await holdsAnObject(caller, row);
    if (!own && !holder)
      throw actionRequestError("ACCESS_DENIED", row.id, `You may not read ${uris.actionRequestUri(row.id)}`);
    return { requester, holder };
  }

  return {
    /**
     * Stores the AccessDelegationRequest as the holder's policy decides it, the grants of an accepted one
     * and its status notification in one transaction. `body` is the api:AccessDelegation as read.
     */
    async request(
      caller: OneRecordCaller,
      delegation: AccessDelegation,
      body: NodeObject,
    ): Promise<AccessDelegationRow> {
      for (const id of delegation.objects)
        if ((await deps.objectMeta(id)) === undefined)
          throw new AppError(
            "INVALID_LOGISTICS_OBJECT",
            `api:hasLogisticsObject: no logistics object ${uris.objectUri(id)}`,
            {
              errors: [
                {
                  field: "https://onerecord.iata.org/ns/api#hasLogisticsObject",
                  message: `no logistics object ${uris.objectUri(id)}`,
                },
              ],
            },
          );
      const stored = mapIds(body, (id) => uris.localIdOf(id));
      return prisma.$transaction(async (tx) => {
        // Locked, then read again: a statement sees what committed before it began, and the locking one
        // may have waited for a revocation of the requester's own access to commit.
        await lockDelegationObjects.rows(tx, { objectIds: [...delegation.objects] });
        const locked = await lockDelegationObjects.rows(tx, { objectIds: [...delegation.objects] });
        const reason = refusal(caller, delegation, locked);
        if (reason !== undefined) {
          // A soft bound (no lock: requests racing at the edge may each be stored): what keeps one
          // requester's refused asks from filling the table.
          const [{ n } = { n: 0 }] = await delegationsRejectedRecently.rows(tx, { requestedBy: caller.organizationId });
          if (n >= MAX_REJECTED_DELEGATIONS_PER_DAY)
            throw new AppError(
              "RATE_LIMITED",
              `${n} of your access delegations were rejected in the last 24 hours: this server stores at most ` +
                `${MAX_REJECTED_DELEGATIONS_PER_DAY} a day; delegate what you may delegate`,
              { retryAfterSeconds: 3_600 },
            );
        }
        const [row] = await insertDelegation.rows(tx, {
          id: randomUUID(),
          status: reason === undefined ? "REQUEST_ACCEPTED" : "REQUEST_REJECTED",
          requestedBy: caller.organizationId,
          decidedBy: DECIDED_ON_ARRIVAL_BY,
          reason: reason ?? null,
          errorStatus: reason === undefined ? null : 403,
          delegation: JSON.stringify(stored),
          objects: [...delegation.objects],
          organizations: [delegation.organization],
          permissions: [...delegation.permissions],
          expiresAt: delegation.expiresAt ?? null,
          notifyStatusChange: delegation.notifyRequestStatusChange,
        });
        if (reason === undefined)
          await grantDelegation.rows(tx, {
            delegationId: row!.id,
            objectIds: [...delegation.objects],
            organizationId: delegation.organization,
            grantedBy: caller.organizationId,
            expiresAt: delegation.expiresAt ?? null,
          });
        const types = new Map(locked.map((object) => [object.id, object.type]));
        await notifyStatus(tx, [row!], (id) => types.get(id));
        return row!;
      });
    },

    /** The request, for its requester, its delegate and its objects' holders; undefined when this kind holds no `id`. */
    async read(caller: OneRecordCaller, id: string): Promise<AccessDelegationRow | undefined> {
      const row = await held(id);
      if (row) await visible(caller, row, false);
      return row;
    },

    /** Decided on arrival: the holder has nothing left to decide (422), anyone else may not (403). */
    async decide(caller: OneRecordCaller, id: string): Promise<AccessDelegationRow | undefined> {
      const row = await held(id);
      if (!row) return undefined;
      const { holder } = await visible(caller, row, true);
      if (!holder)
        throw actionRequestError(
          "ACCESS_DENIED",
          id,
          "Only the holder of the logistics objects decides on an access delegation",
        );
      throw actionRequestError(
        "ACTION_REQUEST_DECIDED",
        id,
        `The access delegation was decided on arrival: it is ${row.status}, no longer pending`,
      );
    },

    /**
     * The requester, or a holder of one of its objects, withdraws it: in one transaction it is revoked,
     * its grants are deleted with what its delegate passed on, and the delegations left with no grant by
     * that are revoked too (the trust chain). Revocable while pending or accepted (422 after).
     */
    async revoke(caller: OneRecordCaller, id: string): Promise<AccessDelegationRow | undefined> {
      const row = await held(id);
      if (!row) return undefined;
      const { requester, holder } = await visible(caller, row, row.requested_by !== caller.organizationId);
      if (!requester && !holder)
        throw actionRequestError("ACCESS_DENIED", id, "Only the requester or the holder revokes an action request");
      const decided = () =>
        actionRequestError(
          "ACTION_REQUEST_DECIDED",
          id,
          `The access delegation is ${row.status}: it cannot be revoked`,
        );
      if (row.status !== "REQUEST_PENDING" && row.status !== "REQUEST_ACCEPTED") throw decided();
      return prisma.$transaction(async (tx) => {
        // The objects first, then the requests (as every writer of these grants): no cycle of waits.
        const locked = await lockDelegationObjects.rows(tx, { objectIds: row.objects });
        const [revoked] = await revokeDelegation.rows(tx, { id, revokedBy: caller.organizationId });
        if (!revoked) throw decided();
        const withdrawn = await withdrawDelegation.rows(tx, { delegationId: id });
        const chained = [...new Set(withdrawn.map((g) => g.delegation_id))].filter(
          (other): other is string => other !== null && other !== id,
        );
        const alsoRevoked =
          chained.length === 0
            ? []
            : await revokeChainedDelegations.rows(tx, {
                ids: chained,
                revokedBy: caller.organizationId,
                reason: `Withdrawn with ${uris.actionRequestUri(id)}, on whose access it was granted`,
              });
        const types = new Map(locked.map((object) => [object.id, object.type]));
        await notifyStatus(tx, [revoked, ...alsoRevoked], (objectId) => types.get(objectId));
        return revoked;
      });
    },
  };
}

export type DelegationService = ReturnType<typeof createDelegationService>;
