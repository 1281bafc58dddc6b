import { randomUUID } from "node:crypto";
import { type Database, openDatabase } from "../../src/db/database";
import { leaseEmbeddedDatabase } from "./embedded-pool";
import type { Backend, Disposers } from "./harness";
import { createPostgresDatabase } from "./postgres";

/**
 * A migrated database of the backend's kind, of this test file's own until it ends, without an app:
 * for testing statements. The embedded one is the pool's (embedded-pool.ts). `url`: PostgreSQL's,
 * for connections of a test's own.
 */
export async function openTestDatabase(
  backend: Backend,
  disposers: Disposers,
): Promise<{ database: Database; url: string | undefined }> {
  if (backend === "pglite") {
    const lease = await leaseEmbeddedDatabase();
    disposers.add(() => lease.release());
    return { database: lease.database, url: undefined };
  }
  const created = await createPostgresDatabase();
  disposers.add(created.drop);
  const database = await openDatabase({ kind: "postgres", url: created.url });
  disposers.add(() => database.close());
  return { database, url: created.url };
}

/** Empties every table the statements write (cascading to subscriptions, deliveries and attempts). */
export async function emptyTables(database: Database): Promise<void> {
  await database.sql.query(
    "TRUNCATE client, status_event, awb_stream, awb_stream_pruned, carrier_status, gateway_instance CASCADE",
    [],
  );
}

let serial = 0;

/** Rows to run statements on, written through Prisma. */
export function fixtures(database: Database) {
  const { prisma } = database;

  /** A fresh AWB (its check digit right), another on each call. */
  const awb = (): string => {
    const n = 1_000_000 + ((++serial * 10 + (process.pid % 10)) % 9_000_000);
    return `020-${n}${n % 7}`;
  };

  const client = async (maxSubscriptions = 100): Promise<string> =>
    (
      await prisma.client.create({
        data: { name: `client ${++serial}`, callbackPrefixes: ["*"], signingSecret: "sealed", maxSubscriptions },
      })
    ).id;

  const subscription = async (
    clientId: string,
    fields: {
      awb?: string;
      callback?: string;
      expiresAt?: Date | null;
      disabledAt?: Date | null;
      failingSince?: Date | null;
      createdAt?: Date;
    } = {},
  ): Promise<string> =>
    (
      await prisma.subscription.create({
        data: {
          clientId,
          awb: fields.awb ?? awb(),
          callback: fields.callback ?? `http://receiver.test/cb/${++serial}`,
          states: ["*"],
          expiresAt: fields.expiresAt ?? null,
          disabledAt: fields.disabledAt ?? null,
          failingSince: fields.failingSince ?? null,
          ...(fields.createdAt ? { createdAt: fields.createdAt } : {}),
        },
      })
    ).id;

  /** A stored milestone, the next position of its AWB's stream. */
  const event = async (of = awb(), receivedAt = new Date()): Promise<string> => {
    const stream = await prisma.awbStream.upsert({
      where: { awb: of },
      create: { awb: of, lastPosition: 1 },
      update: { lastPosition: { increment: 1 } },
    });
    const stored = await prisma.statusEvent.create({
      data: {
        dedupeKey: `key-${randomUUID()}`,
        awb: of,
        state: "DEP",
        occurredAt: receivedAt,
        receivedAt,
        position: stream.lastPosition,
      },
    });
    return stored.id;
  };

  const delivery = async (fields: {
    subscriptionId: string | null;
    clientId: string;
    eventId?: string;
    origin?: string;
    status?: "PENDING" | "DELIVERED" | "DEAD" | "PARKED";
    nextAttemptAt?: Date;
    leaseUntil?: Date | null;
    leaseToken?: string | null;
    completedAt?: Date | null;
    createdAt?: Date;
  }): Promise<string> => {
    const origin = fields.origin ?? "http://receiver.test";
    const created = await prisma.delivery.create({
      data: {
        eventId: fields.eventId ?? (await event()),
        subscriptionId: fields.subscriptionId,
        clientId: fields.clientId,
        callback: `${origin}/cb`,
        origin,
        payload: "{}",
        status: fields.status ?? "PENDING",
        nextAttemptAt: fields.nextAttemptAt ?? new Date(Date.now() - 1_000),
        leaseUntil: fields.leaseUntil ?? null,
        leaseToken: fields.leaseToken ?? null,
        completedAt: fields.completedAt ?? null,
        ...(fields.createdAt ? { createdAt: fields.createdAt } : {}),
      },
    });
    return created.id;
  };

  return {
    awb,
    client,
    subscription,
    event,
    delivery,
    deliveryRow: (id: string) => prisma.delivery.findUniqueOrThrow({ where: { id }, include: { attempts: true } }),
    subscriptionRow: (id: string) => prisma.subscription.findUniqueOrThrow({ where: { id } }),
  };
}
