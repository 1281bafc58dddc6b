/**
 * Data lifecycle over the real server: retention deletes each kind after its own age, in batches,
 * and keeps what is younger or still needed (a pending notification, an AWB's stream head);
 * subscriptions with `expiresAt` stop matching, stop counting and stop sending once past it.
 * Rows are aged with SQL (received_at, completed_at, expires_at moved back) rather than waited for.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { App } from "../src/app";
import { createPartnerAdmin } from "../src/onerecord/partners/partner-admin";
import { throwawayPGlite } from "../src/db/throwaway-pglite";
import { PRISMA_DIR } from "../src/paths";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { oneRecord } from "./support/onerecord-requests";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";
import { inFullSuite } from "./support/suite";

const SHIPMENT = "/carrier/handling/shipment";

describe.each(BEHAVIOUR_BACKENDS)("retention and subscription expiry on %s", (backend) => {
  describeBackend(backend)(`on ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      // No timer (runs are started by the test), and batches of 2 so that every kind takes several.
      ({ app, url } = await startApp(backend, disposers, {
        RETENTION_INTERVAL_MS: "0",
        RETENTION_BATCH_SIZE: "2",
        DELIVERY_POLL_MS: "50",
      }));
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const sql = (query: string, ...values: unknown[]) => app.database.prisma.$executeRawUnsafe(query, ...values);
    const count = async (query: string, ...values: unknown[]) => {
      const [row] = await app.database.prisma.$queryRawUnsafe<Array<{ n: bigint | number }>>(query, ...values);
      return Number(row!.n);
    };
    const subscribe = (body: Record<string, unknown>) =>
      fetch(`${url}${SHIPMENT}/subscribe`, { method: "POST", headers, body: JSON.stringify(body) });
    const ingest = async (events: unknown) => {
      const answer = await fetch(`${url}${SHIPMENT}/events`, { method: "POST", headers, body: JSON.stringify(events) });
      expect(answer.status).toBe(202);
      return ((await answer.json()) as { events: Array<{ eventId: string; matchedSubscriptions: number }> }).events;
    };
    const metric = async (name: string, label: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const prefix = label === "" ? `${name} ` : `${name}{${label}}`;
      const line = text.split("\n").find((l) => l.startsWith(prefix));
      return line ? Number(line.split(" ").pop()) : 0;
    };

    it("deletes each kind after its age, in batches, and keeps what is younger or still pending", async () => {
      const awb = "020-70000003";
      const created = await subscribe({ awb, callback: `${receiver.url}/ok/retention`, states: "*" });
      expect(created.status).toBe(201);
      const { subscriptionId } = (await created.json()) as { subscriptionId: string };
      const events = await ingest(
        ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD"].map((state, i) => ({ awb, state, eventId: `retention-${i}` })),
      );
      await until(async () => (await count(`SELECT count(*) AS n FROM delivery WHERE status = 'DELIVERED'`)) >= 6, {
        what: "six deliveries delivered",
      });
      const fsu = `FSU/14\n${awb}FRAJFK/T1K10\nFOH/16OCT1317/FRA/T1K10\nOSI/OLD\nOSI/YOUNG\n`;
      expect(
        (
          await fetch(`${url}${SHIPMENT}/events`, {
            method: "POST",
            headers: { ...headers, "content-type": "text/plain" },
            body: fsu,
          })
        ).status,
      ).toBe(202);
      const ids = events.map((e) => e.eventId);
      // Events 0–3 a year and a day old; their deliveries: 0, 1 delivered 31 days ago, 2 dead 91 days ago,
      // 3 dead 80 days ago (younger than RETENTION_DEAD_DAYS: kept, and so its event). 4 is old but its
      // delivery still pending (kept). 5 is young (kept).
      await sql(
        `UPDATE status_event SET received_at = now() - interval '366 days' WHERE id = ANY($1::uuid[])`,
        ids.slice(0, 5),
      );
      await sql(
        `UPDATE delivery SET completed_at = now() - interval '31 days' WHERE event_id = ANY($1::uuid[])`,
        ids.slice(0, 2),
      );
      await sql(
        `UPDATE delivery SET status = 'DEAD', completed_at = now() - interval '91 days' WHERE event_id = $1::uuid`,
        ids[2],
      );
      await sql(
        `UPDATE delivery SET status = 'DEAD', completed_at = now() - interval '80 days' WHERE event_id = $1::uuid`,
        ids[3],
      );
      await sql(
        `UPDATE delivery SET status = 'PENDING', completed_at = NULL, next_attempt_at = now() + interval '1 day' WHERE event_id = $1::uuid`,
        ids[4],
      );
      await sql(
        `UPDATE carrier_status SET received_at = now() - interval '366 days' WHERE awb = $1 AND code IN ('FOH', 'OSI') AND source_text <> 'OSI/YOUNG'`,
        awb,
      );
      const attemptsBefore = await count(
        `SELECT count(*) AS n FROM delivery_attempt a JOIN delivery d ON d.id = a.delivery_id WHERE d.event_id = ANY($1::uuid[])`,
        ids.slice(0, 2),
      );
      expect(attemptsBefore).toBeGreaterThanOrEqual(2);

      const deleted = await app.retention.runOnce();
      expect(deleted).toMatchObject({ delivered_deliveries: 2, dead_deliveries: 1, events: 3, carrier_statuses: 2 });
      const left = await app.database.prisma.statusEvent.findMany({ where: { awb }, select: { id: true } });
      expect(left.map((e) => e.id).sort()).toEqual([ids[3], ids[4], ids[5]].sort());
      expect(await count(`SELECT count(*) AS n FROM delivery WHERE subscription_id = $1::uuid`, subscriptionId)).toBe(
        3,
      );
      // A delivery's attempts went with it.
      expect(
        await count(
          `SELECT count(*) AS n FROM delivery_attempt a LEFT JOIN delivery d ON d.id = a.delivery_id WHERE d.id IS NULL`,
        ),
      ).toBe(0);
      expect(await count(`SELECT count(*) AS n FROM carrier_status WHERE awb = $1`, awb)).toBe(1);
      expect(await metric("gateway_retention_deleted_total", 'kind="events"')).toBe(3);
      // What the operator watches for growth (and, embedded, the run's VACUUM did not fail it).
      expect(await metric("gateway_table_bytes", 'table="status_event"')).toBeGreaterThan(0);
      const metricsText = await (await fetch(`${url}/metrics`)).text();
      expect(metricsText).toMatch(/^gateway_table_rows_estimate\{table="status_event"\} \d+$/m);
      if (backend === "pglite") {
        // The embedded database has no autovacuum: only the run's VACUUM (ANALYZE) makes the estimate exact.
        const rows = await count(`SELECT count(*) AS n FROM status_event`);
        expect(await metric("gateway_table_rows_estimate", 'table="status_event"')).toBe(rows);
      }

      // The AWB's stream goes on from its head: a new event is not numbered 1 again.
      await ingest({ awb, state: "DLV", eventId: "retention-after" });
      const history = (await (await fetch(`${url}${SHIPMENT}/events?awb=${awb}`, { headers })).json()) as Array<{
        state: string;
        sequence: string;
      }>;
      expect(history.find((m) => m.state === "DLV")?.sequence).toBe("7");
      // A second run finds nothing more.
      expect(await app.retention.runOnce()).toMatchObject({ delivered_deliveries: 0, dead_deliveries: 0, events: 0 });
    });

    it("takes expiresAt on create and update, refusing a past or malformed one, and shows it", async () => {
      const awb = "020-70000014";
      const past = await subscribe({
        awb,
        callback: `${receiver.url}/ok/expiry-a`,
        states: "*",
        expiresAt: "2020-01-01T00:00:00Z",
      });
      expect(past.status).toBe(400);
      expect(((await past.json()) as { errors: Array<{ field: string; message: string }> }).errors).toEqual([
        { field: "expiresAt", message: "must be in the future" },
      ]);
      const malformed = await subscribe({
        awb,
        callback: `${receiver.url}/ok/expiry-a`,
        states: "*",
        expiresAt: "2027-02-30T00:00:00Z",
      });
      expect(malformed.status).toBe(400);
      const later = new Date(Date.now() + 86_400_000).toISOString();
      const created = await subscribe({ awb, callback: `${receiver.url}/ok/expiry-a`, states: "*", ExpiresAt: later });
      expect(created.status).toBe(201);
      const view = (await created.json()) as {
        subscriptionId: string;
        expiresAt: string | null;
        disabledAt: string | null;
      };
      expect(view).toMatchObject({ expiresAt: later, disabledAt: null });
      // A full replacement without it clears it.
      const updated = await fetch(`${url}${SHIPMENT}/subscribe/${view.subscriptionId}`, {
        method: "PUT",
        headers,
        body: JSON.stringify({ AWB: awb, Callback: `${receiver.url}/ok/expiry-a`, States: "DEP" }),
      });
      expect(updated.status).toBe(200);
      expect(((await updated.json()) as { expiresAt: string | null }).expiresAt).toBeNull();
      // GraphQL takes and shows it too.
      const graphql = await fetch(`${url}/graphql`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          query: `mutation($input: SubscriptionInput!) { createSubscription(input: $input) { expiresAt disabledAt } }`,
          variables: { input: { awb, callback: `${receiver.url}/ok/expiry-b`, states: ["DEP"], expiresAt: later } },
        }),
      });
      const { data, errors } = (await graphql.json()) as {
        data: { createSubscription: { expiresAt: string } };
        errors?: unknown;
      };
      expect(errors).toBeUndefined();
      expect(new Date(data.createSubscription.expiresAt).toISOString()).toBe(later);
    });

    it("once expired, cannot be updated (404), and gives up its AWB and callback to an update that takes them", async () => {
      const awb = "020-70000051";
      const make = async (path: string) => {
        const created = await subscribe({ awb, callback: `${receiver.url}/ok/${path}`, states: "*" });
        expect(created.status).toBe(201);
        return ((await created.json()) as { subscriptionId: string }).subscriptionId;
      };
      const [expired, live] = [await make(`put-x-${backend}`), await make(`put-y-${backend}`)];
      await sql(`UPDATE subscription SET expires_at = now() - interval '1 second' WHERE id = $1::uuid`, expired);
      const put = (id: string, callback: string) =>
        fetch(`${url}${SHIPMENT}/subscribe/${id}`, {
          method: "PUT",
          headers,
          body: JSON.stringify({
            AWB: awb,
            Callback: callback,
            States: "*",
            ExpiresAt: new Date(Date.now() + 86_400_000).toISOString(),
          }),
        });
      // Reviving it by PUT would let a client hold more than its cap: subscribe again instead.
      expect((await put(expired, `${receiver.url}/ok/put-x-${backend}`)).status).toBe(404);
      // The live one moves onto the expired one's callback: the expired one goes (it was a 500).
      const moved = await put(live, `${receiver.url}/ok/put-x-${backend}`);
      expect(moved.status).toBe(200);
      expect(await count(`SELECT count(*) AS n FROM subscription WHERE id = $1::uuid`, expired)).toBe(0);
    });

    it("marks dead the parked notifications of a subscription disabled for longer than RETENTION_DEAD_DAYS", async () => {
      const awb = "020-70000062";
      const created = await subscribe({ awb, callback: `${receiver.url}/ok/parked-${backend}`, states: "*" });
      const { subscriptionId } = (await created.json()) as { subscriptionId: string };
      // Disabled (as delivery does it) before its notification is sent: parked.
      await sql(
        `UPDATE subscription SET disabled_at = now(), disabled_reason = 'test' WHERE id = $1::uuid`,
        subscriptionId,
      );
      await sql(
        `INSERT INTO delivery (id, event_id, subscription_id, client_id, callback, origin, payload, next_attempt_at)
                 SELECT gen_random_uuid(), e.id, s.id, s.client_id, s.callback, 'http://x', '{}', 'infinity'
                 FROM subscription s, (SELECT id FROM status_event LIMIT 1) e WHERE s.id = $1::uuid`,
        subscriptionId,
      );
      const dead = () =>
        count(
          `SELECT count(*) AS n FROM delivery WHERE subscription_id = $1::uuid AND status = 'DEAD'`,
          subscriptionId,
        );
      await app.retention.runOnce();
      expect(await dead()).toBe(0); // disabled a moment ago: still parked
      await sql(`UPDATE subscription SET disabled_at = now() - interval '91 days' WHERE id = $1::uuid`, subscriptionId);
      await app.retention.runOnce();
      expect(await dead()).toBe(1);
    });

    it("once expired: matches nothing, no longer counts toward the cap, sends nothing queued, and is deleted later", async () => {
      const [awbA, awbB, awbD] = ["020-70000025", "020-70000036", "020-70000040"];
      const { clientId } = await app.services.clients.createClient({
        name: `expiry-${backend}`,
        callbackPrefixes: ["*"],
        maxSubscriptions: 2,
      });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
      const as = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const create = (body: Record<string, unknown>) =>
        fetch(`${url}${SHIPMENT}/subscribe`, { method: "POST", headers: as, body: JSON.stringify(body) });
      const later = new Date(Date.now() + 86_400_000).toISOString();
      const callback = `${receiver.url}/ok/expiry-${backend}`;
      const ids: string[] = [];
      for (const awb of [awbA, awbD]) {
        const created = await create({ awb, callback, states: "*", expiresAt: later });
        expect(created.status).toBe(201);
        ids.push(((await created.json()) as { subscriptionId: string }).subscriptionId);
      }
      expect((await create({ awb: awbB, callback, states: "*" })).status).toBe(409); // at the cap

      // A notification each, queued while they were live, failing and waiting for a retry.
      receiver.setPostStatus(500);
      await ingest([awbA, awbD].map((awb) => ({ awb, state: "RCS", eventId: `expiry-queued-${awb}-${backend}` })));
      const pendingAfterOneAttempt = () =>
        count(
          `SELECT count(*) AS n FROM delivery WHERE subscription_id = ANY($1::uuid[]) AND attempt_count = 1 AND status = 'PENDING'`,
          ids,
        );
      await until(async () => (await pendingAfterOneAttempt()) === 2, { what: "the first attempts" });
      receiver.setPostStatus(200);

      // They expire: their retries are due at once, yet nothing is sent, and new milestones match neither.
      await sql(`UPDATE subscription SET expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, ids);
      await sql(`UPDATE delivery SET next_attempt_at = now() WHERE subscription_id = ANY($1::uuid[])`, ids);
      const after = await ingest(
        [awbA, awbD].map((awb) => ({ awb, state: "MAN", eventId: `expiry-after-${awb}-${backend}` })),
      );
      expect(after.map((e) => e.matchedSubscriptions)).toEqual([0, 0]);
      // A control on the same origin, due after them: its first POST is answered 404, its retry made
      // due at once; the claim that takes that retry had theirs in reach, due as well.
      const control = `${receiver.url}/ok/expiry-control-${backend}`;
      let controlPosts = 0;
      receiver.setPostStatus((post) =>
        post.path.startsWith("/ok/expiry-control") && ++controlPosts === 1 ? 404 : 200,
      );
      expect((await subscribe({ awb: "020-70000051", callback: control, states: "*" })).status).toBe(201);
      await ingest({ awb: "020-70000051", state: "RCS", eventId: `expiry-control-${backend}` });
      const controlIs = (status: string) =>
        count(
          `SELECT count(*) AS n FROM delivery WHERE callback = $1 AND status = $2::delivery_status`,
          control,
          status,
        );
      await until(
        async () =>
          (await count(`SELECT count(*) AS n FROM delivery WHERE callback = $1 AND attempt_count = 1`, control)) === 1,
        { what: "the control's first attempt" },
      );
      await sql(`UPDATE delivery SET next_attempt_at = now() WHERE callback = $1`, control);
      await until(async () => (await controlIs("DELIVERED")) === 1, { what: "the control's retry delivered" });
      expect(controlPosts).toBe(2);
      expect(await pendingAfterOneAttempt()).toBe(2);

      // They no longer count toward the cap, and the same AWB and callback may be subscribed to again:
      // the new subscription replaces the expired one, whose queued notification is then dead, unsent.
      expect((await create({ awb: awbB, callback, states: "*" })).status).toBe(201);
      const renewed = await create({ awb: awbA, callback, states: "DEP" });
      expect(renewed.status).toBe(201);
      expect(((await renewed.json()) as { subscriptionId: string }).subscriptionId).not.toBe(ids[0]);
      expect(
        await count(
          `SELECT count(*) AS n FROM delivery d JOIN status_event e ON e.id = d.event_id
           WHERE e.awb = $1 AND d.status = 'DEAD' AND d.attempt_count = 1 AND d.last_error LIKE 'subscription expired%'`,
          awbA,
        ),
      ).toBe(1);

      // Retention marks the other's parked notification dead, and deletes it 30 days after it expired.
      const expiredBefore = await metric("gateway_retention_expired_deliveries_total", "");
      await app.retention.runOnce();
      expect(
        await count(
          `SELECT count(*) AS n FROM delivery WHERE subscription_id = $1::uuid AND status = 'DEAD' AND attempt_count = 1 AND last_error LIKE 'subscription expired%'`,
          ids[1],
        ),
      ).toBe(1);
      expect(await metric("gateway_retention_expired_deliveries_total", "")).toBe(expiredBefore + 1);
      await sql(`UPDATE subscription SET expires_at = now() - interval '31 days' WHERE id = $1::uuid`, ids[1]);
      expect(await app.retention.runOnce()).toMatchObject({ expired_subscriptions: 1 });
      expect(await count(`SELECT count(*) AS n FROM subscription WHERE id = $1::uuid`, ids[1])).toBe(0);
      // Nothing of theirs was sent after the first failing attempts: two RCS posts in all, no retry.
      expect(receiver.posts.filter((p) => p.path === `/ok/expiry-${backend}` && p.body.includes('"RCS"'))).toHaveLength(
        2,
      );
    }, 60_000);

    it("deletes ONE Record's ended SubscriptionRequests once their notifications are gone, spent proposals and old received notifications; keeps what is young or still needed", async () => {
      const API = "https://onerecord.iata.org/ns/api#";
      const base = `${url}/onerecord`;
      // A forwarder with its ONE Record server registered (the receiver), reading AWBs.
      const created = await app.services.clients.createClient({ name: "onerecord forwarder", callbackPrefixes: ["*"] });
      const key = (await app.services.clients.issueKey(created.clientId, ["events:read", "subscriptions"])).key;
      const organization = `organization-${created.clientId}`;
      await createPartnerAdmin(app.database.prisma, undefined).add({
        serverUrl: `${receiver.url}/ok/onerecord-${backend}`,
        clientId: created.clientId,
      });
      const [revokedAwb, liveAwb] = ["020-70000095", "020-70000106"];
      await ingest([revokedAwb, liveAwb].map((awb) => ({ awb, state: "RCS", eventId: `onerecord-rcs-${awb}` })));
      const subscribe = async (awb: string) => {
        const res = await oneRecord(`${base}/subscriptions`, {
          token: key,
          body: {
            "@context": { api: API },
            "@type": "api:Subscription",
            "api:hasSubscriber": { "@id": `${base}/logistics-objects/${organization}` },
            "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
            "api:hasTopic": {
              "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
              "@value": `${base}/logistics-objects/shipment-${awb}`,
            },
            "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }],
          },
        });
        expect(res.status).toBe(201);
        return res.headers.get("location")!;
      };
      const revoked = await subscribe(revokedAwb);
      const live = await subscribe(liveAwb);
      const idOf = (request: string) => request.split("/").pop()!;
      // The revoked one was notified of a milestone before it was revoked: its delivery is in the log.
      await ingest({ awb: revokedAwb, state: "MAN", eventId: `onerecord-man-${revokedAwb}` });
      const deliveriesOf = (request: string, status = "DELIVERED") =>
        count(
          `SELECT count(*) AS n FROM delivery WHERE onerecord_subscription_id = $1::uuid AND status = $2::delivery_status`,
          idOf(request),
          status,
        );
      await until(async () => (await deliveriesOf(revoked)) === 1, { what: "the ONE Record notification delivered" });
      expect((await oneRecord(revoked, { method: "DELETE", token: key })).status).toBe(204);

      // Its proposal's partner is this forwarder: one AWB it still follows the legacy way, one it no longer does.
      const legacy = await fetch(`${url}${SHIPMENT}/subscribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ awb: liveAwb, callback: `${receiver.url}/ok/onerecord-legacy`, states: "*" }),
      });
      expect(legacy.status).toBe(201);
      const proposal = async (awb: string) =>
        (
          await app.database.prisma.oneRecordProposal.create({
            data: {
              partner: organization,
              topicType: "LOGISTICS_OBJECT_IDENTIFIER",
              topic: `shipment-${awb}`,
              status: "DONE",
              createdAt: new Date(Date.now() - 31 * 86_400_000),
            },
          })
        ).id;
      await proposal(revokedAwb); // spent: its AWB no longer followed, its subscription revoked
      const wanted = await proposal(liveAwb);

      // Two notifications another server sent here.
      const notified = (id: string) =>
        oneRecord(`${base}/notifications`, {
          token: key,
          headers: { "notification-id": id },
          body: {
            "@context": { api: API },
            "@type": "api:Notification",
            "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
            "api:hasLogisticsObject": { "@id": "https://1r.publisher.test/logistics-objects/1a8ded38" },
            "api:hasLogisticsObjectType": {
              "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
              "@value": "https://onerecord.iata.org/ns/cargo#Piece",
            },
          },
        });
      const [oldId, youngId] = [`old-${backend}`, `young-${backend}`];
      for (const id of [oldId, youngId]) expect((await notified(id)).status).toBe(204);
      const received = async () =>
        (await app.database.prisma.oneRecordNotificationReceived.findMany({ where: { sender: organization } }))
          .map((row) => row.notificationId)
          .sort();

      // 31 days on: the revocation, the old notification's arrival.
      await sql(
        `UPDATE onerecord_subscription SET decided_at = now() - interval '31 days', requested_at = now() - interval '31 days' WHERE id = ANY($1::uuid[])`,
        [revoked, live].map(idOf),
      );
      await sql(
        `UPDATE onerecord_notification_received SET received_at = now() - interval '31 days' WHERE notification_id = $1`,
        oldId,
      );
      const first = await app.retention.runOnce();
      expect(first).toMatchObject({ onerecord_proposals: 1, onerecord_notifications_received: 1 });
      // The revoked request stays while its notification is in the delivery log.
      expect(await deliveriesOf(revoked)).toBe(1);
      expect((await oneRecord(revoked, { token: key })).status).toBe(200);
      expect((await app.database.prisma.oneRecordProposal.findMany()).map((row) => row.id)).toEqual([wanted]);
      expect(await received()).toEqual([youngId]);
      expect(await metric("gateway_retention_deleted_total", 'kind="onerecord_notifications_received"')).toBe(1);

      // Its notification delivered 31 days ago goes, and the request with it, in one run; the live one stays.
      await sql(
        `UPDATE delivery SET completed_at = now() - interval '31 days' WHERE onerecord_subscription_id = $1::uuid`,
        idOf(revoked),
      );
      expect(await app.retention.runOnce()).toMatchObject({ delivered_deliveries: 1, onerecord_subscriptions: 1 });
      expect((await oneRecord(revoked, { token: key })).status).toBe(404);
      const left = await oneRecord(live, { token: key });
      expect(left.status).toBe(200);
      expect(left.body).toMatchObject({ "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" } });
      expect(await metric("gateway_retention_deleted_total", 'kind="onerecord_subscriptions"')).toBe(1);
      expect(await metric("gateway_table_bytes", 'table="onerecord_subscription"')).toBeGreaterThan(0);

      // A sender repeating a notification older than the window is stored again (the dedupe went with it).
      expect((await notified(oldId)).status).toBe(204);
      expect(await received()).toEqual([oldId, youngId].sort());
    }, 60_000);

    it("raises an AWB's pruned mark to the highest position it deleted, and never lowers it", async () => {
      const awb = "020-70000081";
      const created = await subscribe({ awb, callback: `${receiver.url}/ok/mark-${backend}`, states: "DEP" });
      expect(created.status).toBe(201);
      await ingest(["RCS", "MAN", "DEP", "ARR"].map((state, i) => ({ awb, state, eventId: `mark-${backend}-${i}` })));
      // DEP (position 3) is notified: its delivery keeps it while RCS, MAN and ARR go.
      await until(
        async () =>
          (await count(
            `SELECT count(*) AS n FROM delivery d JOIN status_event e ON e.id = d.event_id WHERE e.awb = $1 AND d.status = 'DELIVERED'`,
            awb,
          )) === 1,
        { what: "the DEP notification delivered" },
      );
      await sql(`UPDATE status_event SET received_at = now() - interval '366 days' WHERE awb = $1`, awb);
      const positions = async () =>
        (
          await app.database.prisma.$queryRawUnsafe<Array<{ position: bigint }>>(
            `SELECT position FROM status_event WHERE awb = $1 ORDER BY position`,
            awb,
          )
        ).map((r) => Number(r.position));
      const mark = () =>
        count(`SELECT coalesce(max(pruned_through), 0)::int AS n FROM awb_stream_pruned WHERE awb = $1`, awb);
      expect(await mark()).toBe(0);

      await app.retention.runOnce();
      expect(await positions()).toEqual([3]);
      expect(await mark()).toBe(4);

      // The delivery gone (delivered 31 days ago), position 3 goes too: the mark stays at 4.
      await sql(
        `UPDATE delivery d SET completed_at = now() - interval '31 days' FROM status_event e WHERE e.id = d.event_id AND e.awb = $1`,
        awb,
      );
      await app.retention.runOnce();
      expect(await positions()).toEqual([]);
      expect(await mark()).toBe(4);
    }, 60_000);
  });
});

inFullSuite()("the migration that adds awb_stream_pruned", () => {
  it("marks the holes retention had already left: each AWB's highest missing position", async () => {
    const db = await throwawayPGlite();
    try {
      const root = path.join(PRISMA_DIR, "migrations");
      const names = (await readdir(root, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
      const mine = names.findIndex((name) => name.endsWith("_awb_stream_pruned"));
      const apply = async (name: string) => db.exec(await readFile(path.join(root, name, "migration.sql"), "utf8"));
      for (const name of names.slice(0, mine)) await apply(name);
      // A: 1–5 numbered, 3 and 5 kept. B: 1–2, both kept. C: 1–3, none kept. D: numbered, never stored.
      await db.exec(`INSERT INTO awb_stream (awb, last_position) VALUES ('A', 5), ('B', 2), ('C', 3), ('D', 0);
        INSERT INTO status_event (id, dedupe_key, awb, state, occurred_at, position)
        SELECT gen_random_uuid(), awb || p, awb, 'RCS', now(), p FROM (VALUES ('A', 3), ('A', 5), ('B', 1), ('B', 2)) v(awb, p)`);
      await apply(names[mine]!);
      const marks = await db.query<{ awb: string; n: number }>(
        `SELECT awb, pruned_through::int AS n FROM awb_stream_pruned ORDER BY awb`,
      );
      expect(marks.rows).toEqual([
        { awb: "A", n: 4 },
        { awb: "C", n: 3 },
      ]);
    } finally {
      await db.close();
    }
  });
});
