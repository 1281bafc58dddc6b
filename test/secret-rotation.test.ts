/**
 * Signing-secret rotation with a grace period, checked by a receiver using the `standardwebhooks`
 * library: during the grace period every delivery carries a signature with the new and the old
 * secret, after it only the new one; grace 0 ends the old secret at once.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { App } from "../src/app";
import {
  DEFAULT_GRACE_SECONDS,
  graceSecondsProblem,
  MAX_GRACE_SECONDS,
  secretsValidAt,
} from "../src/clients/signing-secrets";
import {
  MAX_SIGNING_KEYS,
  SIGNING_KEY_IDLE_MS,
  signingKeysKept,
  webhookSignatures,
} from "../src/delivery/notification";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { graphql, postJson } from "./support/http";
import { type ReceivedPost, startReceiver } from "./support/receiver";
import { standardVerifies, until } from "./support/webhooks";

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

describe("the webhook-signature header", () => {
  const [current, previous] = [newSecret(), newSecret()];
  const id = "0b6b7b0e-5f27-4a53-9b7c-2f7f6a1d2c3e";
  const at = new Date("2026-11-21T10:00:00Z");
  const body = '{"subscriptionId":"s","AWB":"176-12345675","State":"DEP","toaTimestamp":null,"timestamp":"x"}';
  const seconds = at.getTime() / 1000;

  it("is one v1 signature per secret, newest first, separated by one space, as the library signs", () => {
    const header = webhookSignatures([current, previous], id, seconds, body);
    expect(header).toBe(`${new Webhook(current).sign(id, at, body)} ${new Webhook(previous).sign(id, at, body)}`);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(webhookSignatures([current], id, seconds, body)).toBe(new Webhook(current).sign(id, at, body));
  });

  it("signs with each secret's own key however many secrets take turns (its keys are made once and kept)", () => {
    // More secrets than the signer keeps keys for, each signing twice, the second time after all the
    // others: a key kept for the wrong secret, or one lost when the keys start again, signs wrongly.
    const many = Array.from({ length: 1_100 }, newSecret);
    const signed = (secret: string) => webhookSignatures([secret], id, seconds, body);
    const first = many.map(signed);
    const second = many.map(signed);
    const library = many.map((secret) => new Webhook(secret).sign(id, at, body));
    expect(new Set(first).size).toBe(many.length);
    expect(first).toEqual(library);
    expect(second).toEqual(library);
    expect(signingKeysKept()).toBe(MAX_SIGNING_KEYS);
  });

  it("forgets a secret's key once it has gone unused for SIGNING_KEY_IDLE_MS", () => {
    jest.useFakeTimers({ now: Date.now() });
    try {
      webhookSignatures([current, previous], id, seconds, body);
      expect(signingKeysKept()).toBeGreaterThanOrEqual(2);
      // The previous secret rotated out: only the current one signs from now on.
      jest.setSystemTime(Date.now() + SIGNING_KEY_IDLE_MS + 1);
      expect(webhookSignatures([current], id, seconds, body)).toBe(new Webhook(current).sign(id, at, body));
      expect(signingKeysKept()).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it("signs with the previous secret only before its end time", () => {
    const keys = { current, previous: { secret: previous, expiresAt: new Date(at.getTime() + 1000) } };
    expect(secretsValidAt(keys, at)).toEqual([current, previous]);
    expect(secretsValidAt(keys, new Date(at.getTime() + 1000))).toEqual([current]);
    expect(secretsValidAt({ current, previous: null }, at)).toEqual([current]);
  });

  it("takes grace periods of whole seconds from 0 to 7 days", () => {
    expect(DEFAULT_GRACE_SECONDS).toBe(86_400);
    for (const ok of [0, 1, DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS]) expect(graceSecondsProblem(ok)).toBeNull();
    for (const bad of [-1, 1.5, MAX_GRACE_SECONDS + 1, Number.NaN])
      expect(graceSecondsProblem(bad)).toMatchObject({ field: "graceSeconds" });
  });
});

describe.each(BEHAVIOUR_BACKENDS)("signing-secret rotation on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    const original = newSecret();
    let app: App;
    let url: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let clientId: string;
    let awbSeq = 3_000_000;

    const rotate = async (graceSeconds?: number) => {
      const args = graceSeconds === undefined ? "" : `, graceSeconds: ${graceSeconds}`;
      return graphql(
        url,
        `mutation { rotateSigningSecret(clientId: "${clientId}"${args}) { signingSecret previousSecretExpiresAt } }`,
        {},
        admin,
      );
    };
    const rotated = async (graceSeconds?: number) => {
      const before = Date.now();
      const result = await rotate(graceSeconds);
      expect(result.errors).toBeUndefined();
      const { signingSecret, previousSecretExpiresAt } = result.data.rotateSigningSecret;
      expect(signingSecret).toMatch(/^whsec_/);
      const expected = before + (graceSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
      expect(Date.parse(previousSecretExpiresAt)).toBeGreaterThanOrEqual(expected - 5);
      expect(Date.parse(previousSecretExpiresAt)).toBeLessThanOrEqual(expected + 5_000);
      return { secret: signingSecret as string, endsAt: Date.parse(previousSecretExpiresAt), rotatedAt: Date.now() };
    };
    /** A new subscription on a fresh AWB; returns a function that sends one event and waits for its POST. */
    const subscribe = async () => {
      const serial = String(++awbSeq);
      const awb = `176-${serial}${Number(serial) % 7}`;
      const res = await postJson(
        `${url}/carrier/handling/shipment/subscribe`,
        { awb, callback: `${receiver.url}/ok/rotation`, states: "*" },
        admin,
      );
      expect(res.status).toBe(201);
      const subscriptionId = res.body.subscriptionId as string;
      const posts = () => receiver.posts.filter((p) => JSON.parse(p.body).subscriptionId === subscriptionId);
      return { awb, posts };
    };
    const deliverOne = async (): Promise<ReceivedPost> => {
      const { awb, posts } = await subscribe();
      expect((await postJson(`${url}/carrier/handling/shipment/events`, { awb, state: "DEP" }, admin)).status).toBe(
        202,
      );
      await until(() => posts().length === 1, { what: "the notification" });
      return posts()[0]!;
    };
    const signatures = (post: ReceivedPost) => String(post.headers["webhook-signature"]).split(" ");
    const previousSecretInList = async () =>
      (
        await graphql(
          url,
          `
            {
              clients {
                id
                previousSecretExpiresAt
              }
            }
          `,
          {},
          admin,
        )
      ).data.clients.find((c: { id: string }) => c.id === clientId).previousSecretExpiresAt as string | null;

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app, url } = await startApp(backend, disposers, {
        BOOTSTRAP_SIGNING_SECRET: original,
        DELIVERY_RETRY_SCHEDULE: Array(20).fill("300ms").join(","),
        DELIVERY_POLL_MS: "50",
        RATE_LIMIT_PER_SECOND: "0",
      }));
      clientId = (await app.database.prisma.client.findFirstOrThrow()).id;
    });
    afterAll(() => disposers.disposeAll());
    afterEach(() => receiver.setPostStatus(204));

    // The tests run in order: each rotation starts from the secrets the one before left.
    let first: { secret: string; endsAt: number; rotatedAt: number };
    let second: { secret: string; endsAt: number; rotatedAt: number };

    it("before any rotation, deliveries carry one signature, which the secret verifies", async () => {
      const post = await deliverOne();
      expect(signatures(post)).toHaveLength(1);
      expect(standardVerifies(original, post)).toBe(true);
      expect(standardVerifies(newSecret(), post)).toBe(false);
      expect(await previousSecretInList()).toBeNull();
    });

    it("signs a retry of a delivery queued before a rotation with both secrets (default grace: 24 h)", async () => {
      receiver.setPostStatus(500);
      const { awb, posts } = await subscribe();
      await postJson(`${url}/carrier/handling/shipment/events`, { awb, state: "RCS" }, admin);
      await until(() => posts().length >= 1, { what: "the first attempt" });
      const before = posts()[0]!;
      expect(signatures(before)).toHaveLength(1);
      expect(standardVerifies(original, before)).toBe(true);

      first = await rotated(); // no graceSeconds: the default
      // An attempt received well after the rotation answered was signed after it (retries every ~300 ms).
      await until(() => posts().some((p) => p.receivedAt > first.rotatedAt + 500), { what: "a retry" });
      const retry = posts().find((p) => p.receivedAt > first.rotatedAt + 500)!;
      expect(retry.headers["webhook-id"]).toBe(before.headers["webhook-id"]);
      expect(standardVerifies(original, retry)).toBe(true);
      expect(standardVerifies(first.secret, retry)).toBe(true);
      const sentAt = new Date(Number(retry.headers["webhook-timestamp"]) * 1000);
      const id = String(retry.headers["webhook-id"]);
      expect(signatures(retry)).toEqual([
        new Webhook(first.secret).sign(id, sentAt, retry.body),
        new Webhook(original).sign(id, sentAt, retry.body),
      ]);
      expect(Date.parse((await previousSecretInList())!)).toBe(first.endsAt);

      // The previous secret is stored sealed like the current one.
      const row = await app.database.prisma.client.findUniqueOrThrow({ where: { id: clientId } });
      expect(row.previousSigningSecret).toMatch(/^v1:[\w-]+:[\w-]+$/);
      expect(row.previousSigningSecret).not.toContain(original.slice(6, 20));
    });

    it("a rotation during a grace period keeps the then-current secret only; the old one verifies until its end", async () => {
      second = await rotated(2);
      const during = await deliverOne();
      expect(signatures(during)).toHaveLength(2);
      expect(standardVerifies(second.secret, during)).toBe(true);
      expect(standardVerifies(first.secret, during)).toBe(true);
      expect(standardVerifies(original, during)).toBe(false); // the older secret ended at once

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, second.endsAt - Date.now() + 50)));
      const after = await deliverOne();
      expect(signatures(after)).toHaveLength(1);
      expect(standardVerifies(second.secret, after)).toBe(true);
      expect(standardVerifies(first.secret, after)).toBe(false);
      expect(await previousSecretInList()).toBeNull();
    });

    it("grace 0 ends the old secret at once", async () => {
      const third = await rotated(0);
      expect(third.endsAt).toBeLessThanOrEqual(Date.now());
      const post = await deliverOne();
      expect(signatures(post)).toHaveLength(1);
      expect(standardVerifies(third.secret, post)).toBe(true);
      expect(standardVerifies(second.secret, post)).toBe(false);
      const row = await app.database.prisma.client.findUniqueOrThrow({ where: { id: clientId } });
      expect(row.previousSigningSecret).toBeNull();
      expect(await previousSecretInList()).toBeNull();
    });

    it("refuses a grace period outside 0 … 7 days and keeps the secret", async () => {
      const secret = await app.services.clients.signingSecretOf(clientId);
      for (const graceSeconds of [-1, MAX_GRACE_SECONDS + 1]) {
        const result = await rotate(graceSeconds);
        expect(result.errors?.[0]?.extensions?.code).toBe("VALIDATION_FAILED");
        expect(result.errors?.[0]?.message).toContain("graceSeconds");
      }
      expect(await app.services.clients.signingSecretOf(clientId)).toBe(secret);
    });
  });
});
