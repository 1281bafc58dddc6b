import { randomUUID } from "node:crypto";
import type { Prisma } from "../../db/database";
import { AppError } from "../../errors";
import { canWrite, delegationGround, type ObjectMeta } from "../identity/access-policy";
import type { OneRecordCaller } from "../identity/caller";
import { isOrganizationObject } from "../identity/organization-objects";
import { CARRIER_ORGANIZATION_ID, clientIdOfOrganizationId, isClientOrganizationId } from "../identity/organizations";
import { mapIds, type NodeObject } from "../jsonld-tree";
import type { AccessDelegationRow } from "../sql/delegation-columns";
import { type LockedObjectRow, lockDelegationObjects } from "../sql/delegation-objects-lock.sql";
import { grantDelegation } from "../sql/delegation-grant.sql";
import { insertDelegation } from "../sql/delegation-insert.sql";
import { lockRequester } from "../sql/requester-lock.sql";
import { delegatedObjectsHeld } from "../sql/delegations-held.sql";
import { delegationsRejectedRecently } from "../sql/delegations-rejected-recently.sql";
import { readDelegation } from "../sql/delegation-read.sql";
import { revokeDelegation } from "../sql/delegation-revoke.sql";
import { withdrawDelegation } from "../sql/delegation-withdraw.sql";
import { revokeChainedDelegations } from "../sql/delegations-chain-revoke.sql";
import { endedGrantObjects, withdrawEndedGrants } from "../sql/grants-ended-withdraw.sql";
import type { OneRecordUris } from "../uris";
import { type AccessDelegation, IS_REQUESTED_FOR, MAY_BE_PASSED_ON, type Permission } from "./access-delegation";
import { DECIDED_ON_ARRIVAL_BY } from "./delegation.view";

/** Rejected access delegations one requester may have stored in 24 hours; beyond, refused (429), nothing stored. */
export const MAX_REJECTED_DELEGATIONS_PER_DAY = 100;

/** Grants that ended, withdrawn per request before it is decided: the rest go with the next ones. */
const ENDED_GRANTS_PER_REQUEST = 1_000;

/**
 * What one requester may have this server keep of its access delegations (config.oneRecord
 * .delegationQuota; docs/ONE-RECORD.md "Delegation quotas"). Past either, a delegation is refused (422
 * DELEGATION_LIMIT_REACHED) and nothing is stored.
 */
export interface DelegationQuota {
  /**
   * ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER: the logistics objects its stored delegations name in
   * all (each delegation counting its own), accepted, revoked or failed until retention deletes them.
   */
  readonly objectsPerRequester: number;
  /** ONE_RECORD_DELEGATES_PER_OBJECT: the Organizations it has granted any one object to. */
  readonly delegatesPerObject: number;
}

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
  readonly quota: DelegationQuota;
  /**
   * objects.service metaOf: an object's access facts (an AWB's skeletons written on first use), its
   * grants read for `reader` only; undefined for none.
   */
  objectMeta(id: string, reader: string): Promise<ObjectMeta | undefined>;
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

const metaOf = (row: LockedObjectRow): ObjectMeta => ({
  id: row.id,
  type: row.type,
  awb: row.awb,
  createdBy: row.created_by,
});

/** The holder's policy on a delegation: why it refuses it, or the objects granted on a scope's access. */
type Decision = { readonly reason: string } | { readonly reason?: undefined; readonly scopeObjects: string[] };

/**
 * Access delegations (docs/ONE-RECORD.md "Access delegations"): an Organization asks this server to let
 * another read logistics objects; the holder's policy decides at once. Accepted: read grants for the
 * delegate in logistics_object_grant, in the same transaction, expiring with the delegation; revoked:
 * those grants withdrawn with everything passed on from them (the trust chain), in one transaction.
 */
export function createDelegationService(deps: DelegationServiceDeps) {
  const { prisma, uris, quota } = deps;

  const actionRequestError = (code: "ACCESS_DENIED" | "ACTION_REQUEST_DECIDED", id: string, message: string) =>
    new AppError(code, message, { extensions: { resource: uris.actionRequestUri(id) } });

  /**
   * The holder's policy (docs/ONE-RECORD.md "Access delegations"): this server delegates reading only,
   * and only an Organization that may pass reading an object on does (access-policy.ts
   * delegationGround): its creator, a reader of an AWB's objects by scope, a grantee the holder let pass
   * it on. Only the creator lets its delegates pass it on in turn.
   */
  function decide(caller: OneRecordCaller, delegation: AccessDelegation, locked: readonly LockedObjectRow[]): Decision {
    const writes = delegation.permissions.filter((p) => !READ_PERMISSIONS.includes(p));
    if (writes.length > 0)
      return {
        reason: `This server delegates reading only (api:GET_LOGISTICS_OBJECT, api:GET_LOGISTICS_EVENT); it does not delegate ${writes.map((p) => `api:${p}`).join(", ")}`,
      };
    if (!delegation.permissions.includes("GET_LOGISTICS_OBJECT"))
      return {
        reason:
          "This server delegates reading a logistics object and its events together: ask for api:GET_LOGISTICS_OBJECT",
      };
    const byId = new Map(locked.map((row) => [row.id, row]));
    const scopeObjects: string[] = [];
    for (const id of delegation.objects) {
      const row = byId.get(id);
      const uri = uris.objectUri(id);
      if (!row)
        return {
          reason: `${uri} is the carrier's reference data, readable by every authenticated caller: there is nothing to delegate`,
        };
      const ground = delegationGround(caller, metaOf(row), row.requester_may_pass_on);
      if (ground === undefined)
        return {
          reason: `You may not read ${uri}: only its holder, or an Organization that may read it, delegates access to it`,
        };
      if (ground === "grant")
        return {
          reason: `Your access to ${uri} is a grant its holder did not let you pass on: ask the holder to delegate it`,
        };
      if (delegation.mayBePassedOn && ground !== "holder")
        return {
          reason: `Only the holder of ${uri}, its creator, lets a delegate pass access to it on (${MAY_BE_PASSED_ON})`,
        };
      if (ground === "scope") scopeObjects.push(id);
    }
    return { scopeObjects };
  }

  /** Refuses (422, nothing stored) a delegation that would take its requester past a quota. */
  async function checkQuota(
    tx: Tx,
    caller: OneRecordCaller,
    delegation: AccessDelegation,
    locked: readonly LockedObjectRow[],
  ): Promise<void> {
    for (const object of locked)
      if (object.delegated_by_requester >= quota.delegatesPerObject)
        throw new AppError(
          "DELEGATION_LIMIT_REACHED",
          `You have delegated ${uris.objectUri(object.id)} to ${object.delegated_by_requester} Organizations: this ` +
            `server keeps at most ${quota.delegatesPerObject} per object and requester (ONE_RECORD_DELEGATES_PER_OBJECT); ` +
            "revoke one you no longer need",
          { extensions: { resource: uris.objectUri(object.id) } },
        );
    const [{ objects } = { objects: 0 }] = await delegatedObjectsHeld.rows(tx, { requestedBy: caller.organizationId });
    if (objects + delegation.objects.length > quota.objectsPerRequester)
      throw new AppError(
        "DELEGATION_LIMIT_REACHED",
        `Your access delegations name ${objects} logistics objects: this server keeps at most ` +
          `${quota.objectsPerRequester} per requester (ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER), revoked ones ` +
          "until retention deletes them; revoke those you no longer need",
      );
  }

  /**
   * Withdraws the requester's grants that ended (expired, or made on an API key since revoked), and
   * revokes the delegations left with none, in a transaction of its own: what it holds then counts
   * only what still grants, and retention deletes the rest in time. Locks as a revocation does.
   */
  async function withdrawEnded(requester: string): Promise<void> {
    const objects = await endedGrantObjects.rows(prisma, {
      grantedBy: requester,
      clientId: clientIdOfOrganizationId(requester) ?? null,
      limit: ENDED_GRANTS_PER_REQUEST,
    });
    if (objects.length === 0) return;
    await prisma.$transaction(async (tx) => {
      const objectIds = objects.map((o) => o.object_id);
      const locked = await lockDelegationObjects.rows(tx, { objectIds, requester });
      const ended = await withdrawEndedGrants.rows(tx, { grantedBy: requester, objectIds });
      const ids = [...new Set(ended.map((g) => g.delegation_id))];
      if (ids.length === 0) return;
      const revoked = await revokeChainedDelegations.rows(tx, {
        ids,
        revokedBy: DECIDED_ON_ARRIVAL_BY,
        reason: "Its grants ended: they expired, or the API key it was asked with was revoked",
      });
      const types = new Map(locked.map((object) => [object.id, object.type]));
      await notifyStatus(tx, revoked, (id) => types.get(id));
    });
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

  /**
   * A delegate named by one of this server's ids is a client's Organization, or a logistics object that
   * is an Organization (cargo:Organization or a subclass: whoever authenticates as it, with a token
   * whose logistics_agent_uri is its URI, reads what it is given). Another server's is taken as named.
   */
  async function checkDelegate(organization: string, requester: string): Promise<void> {
    if (organization.includes(":") || isClientOrganizationId(organization)) return;
    // The carrier's Organization holds what it holds already; reference objects are no delegates.
    const meta = organization === CARRIER_ORGANIZATION_ID ? undefined : await deps.objectMeta(organization, requester);
    if (isOrganizationObject(meta)) return;
    const uri = uris.objectUri(organization);
    const message = `${uri} is no Organization: name a client's, an Organization logistics object, or another server's`;
    throw new AppError("INVALID_LOGISTICS_OBJECT", `${IS_REQUESTED_FOR}: ${message}`, {
      errors: [{ field: IS_REQUESTED_FOR, message }],
    });
  }

  /** The request when this kind holds `id`; undefined for any other id. */
  async function held(id: string): Promise<AccessDelegationRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return (await readDelegation.rows(prisma, { id }))[0];
  }

  /** Whether the caller holds one of the request's objects (may write it): it may revoke the request. */
  async function holdsAnObject(caller: OneRecordCaller, row: AccessDelegationRow): Promise<boolean> {
    for (const id of row.objects) {
      const meta = await deps.objectMeta(id, caller.organizationId);
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
      const requester = caller.organizationId;
      for (const id of delegation.objects)
        if ((await deps.objectMeta(id, requester)) === undefined)
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
      await checkDelegate(delegation.organization, requester);
      const stored = mapIds(body, (id) => uris.localIdOf(id));
      await withdrawEnded(requester);
      return prisma.$transaction(async (tx) => {
        // The requester's lock first (its counts), then the objects'. Locked, then read again: a statement
        // sees what committed before it began, and the locking one may have waited for a revocation of
        // the requester's own access to commit.
        await lockRequester.affectedRows(tx, { requester });
        const objectIds = [...delegation.objects];
        await lockDelegationObjects.rows(tx, { objectIds, requester });
        const locked = await lockDelegationObjects.rows(tx, { objectIds, requester });
        const decision = decide(caller, delegation, locked);
        if (decision.reason !== undefined) {
          const [{ n } = { n: 0 }] = await delegationsRejectedRecently.rows(tx, { requestedBy: requester });
          if (n >= MAX_REJECTED_DELEGATIONS_PER_DAY)
            throw new AppError(
              "RATE_LIMITED",
              `${n} of your access delegations were rejected in the last 24 hours: this server stores at most ` +
                `${MAX_REJECTED_DELEGATIONS_PER_DAY} a day; delegate what you may delegate`,
              { retryAfterSeconds: 3_600 },
            );
        } else await checkQuota(tx, caller, delegation, locked);
        const [row] = await insertDelegation.rows(tx, {
          id: randomUUID(),
          status: decision.reason === undefined ? "REQUEST_ACCEPTED" : "REQUEST_REJECTED",
          requestedBy: requester,
          decidedBy: DECIDED_ON_ARRIVAL_BY,
          reason: decision.reason ?? null,
          errorStatus: decision.reason === undefined ? null : 403,
          delegation: JSON.stringify(stored),
          objects: objectIds,
          organizations: [delegation.organization],
          permissions: [...delegation.permissions],
          expiresAt: delegation.expiresAt ?? null,
          notifyStatusChange: delegation.notifyRequestStatusChange,
        });
        if (decision.reason === undefined)
          await grantDelegation.rows(tx, {
            delegationId: row!.id,
            objectIds,
            organizationId: delegation.organization,
            grantedBy: requester,
            expiresAt: delegation.expiresAt ?? null,
            mayPassOn: delegation.mayBePassedOn,
            // Access by a scope ends with the key (GRANT_IS_ACTIVE) or the token that carried it.
            scopeObjectIds: decision.scopeObjects,
            grantedWithKey: caller.principal?.keyId ?? null,
            scopeExpiresAt: caller.agentExpiresAt ?? null,
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
        const locked = await lockDelegationObjects.rows(tx, {
          objectIds: row.objects,
          requester: caller.organizationId,
        });
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
