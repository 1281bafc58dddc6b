import type { SqlRunner } from "../../db/sql-statement";
import type { NodeObject } from "../jsonld-tree";
import { insertAwbObjects } from "../sql/awb-objects-insert.sql";
import { subscriptionsReadingAwbs } from "../sql/subscriptions-reading-awbs.sql";
import { readObject } from "../sql/object-read.sql";
import { partnersAnnouncedTo } from "../sql/partners-announced-to.sql";
import type { MatchingSubscriptionRow } from "../sql/subscription-matching-columns";
import { subscriptionsMatchingAwb } from "../sql/subscriptions-matching-awb.sql";
import { subscriptionsMatchingObject } from "../sql/subscriptions-matching-object.sql";
import { notificationsUrlOf } from "../partners/notification-endpoint";

/**
 * A subscription a notification may go to: `readsAll` when its subscriber may read every object the
 * match was asked about, else `granted` lists those it may.
 */
export type MatchedSubscription = MatchingSubscriptionRow & { readsAll: boolean; granted: readonly string[] };

/** An object whose creation, change or event is notified: what a notification of it says. */
export interface NotifiedObject {
  /** Its local id. */
  readonly id: string;
  /** Its most specific class (the Type header): api:hasLogisticsObjectType. */
  readonly type: string;
  /** Every class it states. */
  readonly types: readonly string[];
  /** The AWB, for an AWB's Waybill and Shipment (their access follows the AWB's). */
  readonly awb: string | null;
  readonly createdBy: string;
  /** Its state (expanded, local ids) and revision, for subscriptions that ask for the body. */
  readonly body: NodeObject;
  readonly revision: number;
}

/** A partner to announce new AWB objects to (LOGISTICS_OBJECT_AVAILABLE). */
export interface Partner {
  /** Its server's `/notifications`. */
  readonly endpoint: string;
  readonly clientId: string | null;
}

/** The statements the producers run, in the caller's transaction. */
export const notificationsOutStore = {
  async subscriptionsMatchingAwb(
    tx: SqlRunner,
    match: { objectIds: string[]; classes: string[]; eventTypes: string[] },
  ): Promise<MatchedSubscription[]> {
    const rows = await subscriptionsMatchingAwb.rows(tx, match);
    return rows.map(({ by_scope, granted, ...row }) => ({ ...row, readsAll: by_scope, granted }));
  },

  async subscriptionsMatchingObject(
    tx: SqlRunner,
    match: { objectId: string; classes: string[]; eventType: string; createdBy: string },
  ): Promise<MatchedSubscription[]> {
    const rows = await subscriptionsMatchingObject.rows(tx, match);
    return rows.map((row) => ({ ...row, readsAll: true, granted: [] }));
  },

  async partnersAnnouncedTo(tx: SqlRunner): Promise<Partner[]> {
    const rows = await partnersAnnouncedTo.rows(tx, {});
    return rows.map((r) => ({ endpoint: notificationsUrlOf(r.server_url), clientId: r.client_id }));
  },

  /** Writes the AWB objects not written yet; answers the ids written now. */
  async insertAwbObjects(
    tx: SqlRunner,
    objects: ReadonlyArray<{ id: string; type: string; body: NodeObject; awb: string }>,
    createdBy: string,
  ): Promise<Set<string>> {
    if (objects.length === 0) return new Set();
    const rows = await insertAwbObjects.rows(tx, {
      ids: objects.map((o) => o.id),
      types: objects.map((o) => o.type),
      bodies: objects.map((o) => JSON.stringify(o.body)),
      awbs: objects.map((o) => o.awb),
      createdBy,
    });
    return new Set(rows.map((r) => r.id));
  },

  /** What the subscribers of `ids` may read of `objectIds` (AWB objects), by subscription id. */
  async readingAwbs(
    tx: SqlRunner,
    ids: readonly string[],
    objectIds: readonly string[],
  ): Promise<Map<string, { readsAll: boolean; granted: readonly string[] }>> {
    if (ids.length === 0) return new Map();
    const rows = await subscriptionsReadingAwbs.rows(tx, { ids: [...ids], objectIds: [...objectIds] });
    return new Map(rows.map((r) => [r.id, { readsAll: r.by_scope, granted: r.granted }]));
  },

  async read(tx: SqlRunner, id: string): Promise<NotifiedObject | undefined> {
    const [row] = await readObject.rows(tx, { id });
    return (
      row && {
        id: row.id,
        type: row.type,
        types: row.types,
        awb: row.awb,
        createdBy: row.created_by,
        body: row.body,
        revision: row.revision,
      }
    );
  },
};
