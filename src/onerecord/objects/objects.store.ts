import type { Prisma } from "../../db/database";
import type { SqlRunner } from "../../db/sql-statement";
import type { NodeObject } from "../jsonld-tree";
import { actionRequestsOfObject } from "../sql/action-requests-of-object.sql";
import { countPendingActionRequests } from "../sql/action-requests-pending-count.sql";
import { supersedeActionRequests } from "../sql/action-requests-supersede.sql";
import type { ActionRequestRow } from "../sql/action-request-columns";
import { decideActionRequest } from "../sql/action-request-decide.sql";
import { insertActionRequest } from "../sql/action-request-insert.sql";
import { readActionRequest } from "../sql/action-request-read.sql";
import { ensureAwbObjects } from "../sql/awb-objects-ensure.sql";
import type { ObjectRow } from "../sql/object-columns";
import { insertObject } from "../sql/object-insert.sql";
import { spendDailyQuota } from "../quota/daily-quota";
import { readObject } from "../sql/object-read.sql";
import { readObjectAs } from "../sql/object-read-as.sql";
import { objectRevisionAt } from "../sql/object-revision-at.sql";
import { writeObjectRevision } from "../sql/object-write-revision.sql";

export type { ActionRequestRow } from "../sql/action-request-columns";
export type { ObjectRow } from "../sql/object-columns";

export type StoredObject = ObjectRow & { readers: string[]; delegates: string[] };

export interface NewObject {
  id: string;
  type: string;
  types: string[];
  body: NodeObject;
  awb: string | null;
  createdBy: string;
}

export type ActionRequestStatus =
  "REQUEST_PENDING" | "REQUEST_ACCEPTED" | "REQUEST_REJECTED" | "REQUEST_REVOKED" | "REQUEST_FAILED";

/** A transaction of the object store: its statements, and the notifications queued with them. */
export type ObjectTx = Pick<Prisma, "$queryRawUnsafe">;

/** The logistics objects' and action requests' statements (src/onerecord/sql/), on Prisma or a transaction. */
export function createObjectStore(prisma: Prisma) {
  const on = (tx?: SqlRunner): SqlRunner => tx ?? prisma;
  return {
    /** Runs `work` in one transaction: its statements take the runner it is given. */
    transaction<T>(work: (tx: ObjectTx) => Promise<T>): Promise<T> {
      return prisma.$transaction((tx) => work(tx));
    },

    async read(id: string, tx?: SqlRunner): Promise<StoredObject | undefined> {
      return (await readObject.rows(on(tx), { id }))[0];
    },

    /** As `read`, its grants read for `reader` only: what one caller's access check needs. */
    async readAs(id: string, reader: string): Promise<StoredObject | undefined> {
      return (await readObjectAs.rows(prisma, { id, reader }))[0];
    },

    async revisionAt(id: string, at: Date) {
      return (await objectRevisionAt.rows(prisma, { id, at }))[0];
    },

    /** Spends one of `quota` and `bytes` for `subject`; false when the quota is spent (nothing changed). */
    spendQuota: (quota: { name: string; perDay: number; bytesPerDay: number }, subject: string, bytes: number) =>
      spendDailyQuota(prisma, quota, subject, bytes),

    /** Undefined when the id is taken. */
    async insert(object: NewObject, tx?: SqlRunner): Promise<ObjectRow | undefined> {
      const { body, createdBy, ...rest } = object;
      return (await insertObject.rows(on(tx), { ...rest, body: JSON.stringify(body), createdBy }))[0];
    },

    /**
     * Whether the AWB is known; its skeletons are written if it is and they are missing. `created`:
     * the ids written now.
     */
    async ensureAwbObjects(
      awb: string,
      createdBy: string,
      waybill: { id: string; type: string; body: NodeObject },
      shipment: { id: string; type: string; body: NodeObject },
      tx?: SqlRunner,
    ): Promise<{ known: boolean; created: string[] }> {
      const [row] = await ensureAwbObjects.rows(on(tx), {
        awb,
        createdBy,
        waybillId: waybill.id,
        waybillType: waybill.type,
        waybillBody: JSON.stringify(waybill.body),
        shipmentId: shipment.id,
        shipmentType: shipment.type,
        shipmentBody: JSON.stringify(shipment.body),
      });
      return { known: row?.known === true, created: row?.created ?? [] };
    },

    /** The next revision if the object is still at `revision`; undefined when it moved on. */
    async writeRevision(
      change: { id: string; revision: number; type: string; types: string[]; body: NodeObject },
      actionRequestId: string | null,
      tx?: SqlRunner,
    ): Promise<{ revision: number; last_modified: Date } | undefined> {
      return (
        await writeObjectRevision.rows(on(tx), { ...change, body: JSON.stringify(change.body), actionRequestId })
      )[0];
    },

    /**
     * Stores a pending request (`request` its JSON text), spending its requester's daily `quota`;
     * undefined, with nothing stored, when the quota does not take it.
     */
    async insertActionRequest(
      request: {
        id: string;
        kind: string;
        objectId: string;
        request: string;
        requestedBy: string;
        revision: number;
        operations: number;
      },
      quota: { name: string; perDay: number; bytesPerDay: number },
    ): Promise<ActionRequestRow | undefined> {
      const bytes = Buffer.byteLength(request.request);
      const [row] = await insertActionRequest.rows(prisma, {
        ...request,
        bytes,
        quota: quota.name,
        maxCount: quota.perDay,
        maxBytes: quota.bytesPerDay,
      });
      return row;
    },

    async readActionRequest(id: string, tx?: SqlRunner): Promise<ActionRequestRow | undefined> {
      return (await readActionRequest.rows(on(tx), { id }))[0];
    },

    /** Undefined when it is no longer pending. */
    async decide(
      decision: {
        id: string;
        status: ActionRequestStatus;
        decidedBy: string;
        reason?: string | null;
        errorStatus?: number | null;
      },
      tx?: SqlRunner,
    ): Promise<ActionRequestRow | undefined> {
      const { reason = null, errorStatus = null, ...rest } = decision;
      return (await decideActionRequest.rows(on(tx), { ...rest, reason, errorStatus }))[0];
    },

    async supersede(
      superseded: { objectId: string; revision: number; acceptedId: string; decidedBy: string; reason: string },
      tx?: SqlRunner,
    ): Promise<ActionRequestRow[]> {
      return supersedeActionRequests.rows(on(tx), superseded);
    },

    async pendingActionRequests(objectId: string, requestedBy: string): Promise<number> {
      const [row] = await countPendingActionRequests.rows(prisma, { objectId, requestedBy });
      return row?.pending ?? 0;
    },

    /** The latest of an object's action requests that fit the audit trail's budgets, oldest first. */
    async actionRequestsOf(filter: {
      objectId: string;
      from: Date | null;
      to: Date | null;
      statuses: string[] | null;
    }): Promise<ActionRequestRow[]> {
      return actionRequestsOfObject.rows(prisma, filter);
    },
  };
}

export type ObjectStore = ReturnType<typeof createObjectStore>;
