import { randomUUID } from "node:crypto";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { graphql } from "../support/http";
import { oneRecord } from "../support/onerecord-requests";

/**
 * The operator registers a ONE Record partner on the running gateway, over GraphQL with the admin
 * scope (what `npm run admin -- partner:add` does with the gateway stopped): the partner's
 * notifications are taken from then on, and no longer once it is removed.
 */
const API = "https://onerecord.iata.org/ns/api#";

const REGISTER = `mutation ($serverUrl: String!, $clientId: ID) {
  registerOneRecordPartner(serverUrl: $serverUrl, clientId: $clientId) { organization serverUrl clientId proposeSubscriptions }
}`;

describe.each(BEHAVIOUR_BACKENDS)("ONE Record partners over GraphQL on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    beforeAll(async () => {
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const notify = (token: string) =>
      oneRecord(`${url}/onerecord/notifications`, {
        token,
        body: {
          "@context": { api: API },
          "@type": "api:Notification",
          "api:hasEventType": { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
          "api:hasLogisticsObject": { "@id": `https://1r.publisher.test/logistics-objects/${randomUUID()}` },
        },
      });

    it("registers, lists and removes a partner while the gateway runs; its notifications are taken meanwhile", async () => {
      const { clientId } = await app.services.clients.createClient({ name: "publisher", callbackPrefixes: ["*"] });
      const key = (await app.services.clients.issueKey(clientId, ["subscriptions"])).key;
      const refused = await notify(key);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain("registerOneRecordPartner");

      // Only the admin scope registers.
      const denied = await graphql(
        url,
        REGISTER,
        { serverUrl: "https://1r.publisher.test", clientId },
        {
          authorization: `Bearer ${key}`,
        },
      );
      expect(denied.errors?.[0]?.extensions?.code).toBe("INSUFFICIENT_SCOPE");

      const admin = { authorization: `Bearer ${ADMIN_KEY}` };
      const registered = await graphql(url, REGISTER, { serverUrl: "https://1r.publisher.test/", clientId }, admin);
      expect(registered.errors).toBeUndefined();
      expect(registered.data.registerOneRecordPartner).toEqual({
        organization: `organization-${clientId}`,
        serverUrl: "https://1r.publisher.test",
        clientId,
        proposeSubscriptions: false,
      });
      expect((await notify(key)).status).toBe(204);
      const listed = await graphql(url, "{ oneRecordPartners { organization } }", {}, admin);
      expect(listed.data.oneRecordPartners).toEqual([{ organization: `organization-${clientId}` }]);

      const removed = await graphql(url, `mutation { removeOneRecordPartner(partner: "${clientId}") }`, {}, admin);
      expect(removed.data.removeOneRecordPartner).toBe(true);
      expect((await notify(key)).status).toBe(403);
      // A partner not registered: refused clearly, nothing changed.
      const unknown = await graphql(url, REGISTER, { serverUrl: "https://1r.x.test", clientId: randomUUID() }, admin);
      expect(unknown.errors?.[0]?.extensions?.code).toBe("CLIENT_NOT_FOUND");
      expect((await graphql(url, "{ oneRecordPartners { organization } }", {}, admin)).data.oneRecordPartners).toEqual(
        [],
      );
    });
  });
});
