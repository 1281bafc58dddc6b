/**
 * The callback address policy on every IPv6 form that carries an IPv4 address (IPv4-mapped,
 * IPv4-compatible, IPv4-translated, NAT64 well-known and local-use, 6to4, Teredo) beside the plain
 * ranges: each judged by the IPv4 address it carries, with and without ALLOW_PRIVATE_CALLBACKS.
 * Then over the real server: refused when subscribing (422, nothing sent) and when delivering.
 */
import { checkAddress } from "../src/outbound/address-policy";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/** public: allowed; private: allowed only with ALLOW_PRIVATE_CALLBACKS; never: refused always. */
type Standing = "public" | "private" | "never";

// [form, address, standing, the IPv4 address the refusal names (embedding forms)]
const CASES: Array<[string, string, Standing, string?]> = [
  ["IPv4", "8.8.8.8", "public"],
  ["IPv4", "127.0.0.1", "private"],
  ["IPv4", "10.0.0.1", "private"],
  ["IPv4", "172.16.0.1", "private"],
  ["IPv4", "192.168.1.1", "private"],
  ["IPv4", "100.64.0.1", "private"],
  ["IPv4", "198.18.0.1", "private"],
  ["IPv4", "192.0.0.1", "private"],
  ["IPv4", "192.0.2.1", "private"], // documentation
  ["IPv4", "169.254.169.254", "never"],
  ["IPv4", "100.100.100.200", "never"],
  ["IPv4", "168.63.129.16", "never"], // public by its range, Azure's platform endpoint
  ["IPv4", "192.0.0.192", "never"], // reserved by its range (private), Oracle Cloud's metadata
  ["IPv4", "0.0.0.0", "never"],
  ["IPv4", "224.0.0.1", "never"],
  ["IPv4", "240.0.0.1", "never"],
  ["IPv4", "255.255.255.255", "never"],
  ["IPv6", "2606:4700:4700::1111", "public"],
  ["IPv6", "::1", "private"],
  ["IPv6", "fd12:3456::1", "private"],
  ["IPv6", "fec0::1", "private"], // site-local
  ["IPv6", "2001:db8::1", "private"], // documentation
  ["IPv6", "100::1", "private"], // discard-only
  ["IPv6", "::", "never"],
  ["IPv6", "fe80::1", "never"],
  ["IPv6", "ff02::1", "never"],
  ["IPv6", "fd00:ec2::254", "never"],
  ["IPv4-mapped ::ffff:0:0/96", "::ffff:8.8.8.8", "public"],
  ["IPv4-mapped ::ffff:0:0/96", "::ffff:127.0.0.1", "private", "127.0.0.1"],
  ["IPv4-mapped ::ffff:0:0/96", "::ffff:7f00:1", "private", "127.0.0.1"],
  ["IPv4-mapped ::ffff:0:0/96", "::ffff:a9fe:a9fe", "never", "169.254.169.254"],
  ["IPv4-compatible ::/96", "::808:808", "public"],
  ["IPv4-compatible ::/96", "::7f00:1", "private", "127.0.0.1"],
  ["IPv4-compatible ::/96", "::a00:1", "private", "10.0.0.1"],
  ["IPv4-compatible ::/96", "::a9fe:a9fe", "never", "169.254.169.254"],
  ["IPv4-translated ::ffff:0:0:0/96", "::ffff:0:808:808", "public"],
  ["IPv4-translated ::ffff:0:0:0/96", "::ffff:0:7f00:1", "private", "127.0.0.1"],
  ["IPv4-translated ::ffff:0:0:0/96", "::ffff:0:a9fe:a9fe", "never", "169.254.169.254"],
  ["NAT64 64:ff9b::/96", "64:ff9b::808:808", "public"],
  ["NAT64 64:ff9b::/96", "64:ff9b::8.8.4.4", "public"],
  ["NAT64 64:ff9b::/96", "64:ff9b::7f00:1", "private", "127.0.0.1"],
  ["NAT64 64:ff9b::/96", "64:ff9b::c0a8:101", "private", "192.168.1.1"],
  ["NAT64 64:ff9b::/96", "64:ff9b::a9fe:a9fe", "never", "169.254.169.254"],
  ["NAT64 64:ff9b::/96", "64:ff9b::6464:64c8", "never", "100.100.100.200"],
  ["NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1::808:808", "public"],
  ["NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1::7f00:1", "private", "127.0.0.1"],
  ["NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1::a9fe:a9fe", "never", "169.254.169.254"],
  // Bits 48–95 set: under a /48, /56 or /64 layout the IPv4 address is elsewhere; it cannot be told.
  ["NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1:7f00:1::808:808", "never"],
  ["6to4 2002::/16", "2002:808:808::1", "public"],
  ["6to4 2002::/16", "2002:7f00:1::1", "private", "127.0.0.1"],
  ["6to4 2002::/16", "2002:c0a8:101:1::1", "private", "192.168.1.1"],
  ["6to4 2002::/16", "2002:a9fe:a9fe::1", "never", "169.254.169.254"],
  // Teredo is refused always, whatever it carries: server 65.54.227.120 and client 192.0.2.45 here…
  ["Teredo 2001::/32", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "never"],
  // …and client 127.0.0.1 (the last 32 bits are the client address XOR 0xffffffff) here.
  ["Teredo 2001::/32", "2001:0:4136:e378:8000:63bf:80ff:fffe", "never"],
];

describe("the callback address policy", () => {
  // Rows padded to one length: Jest would hand a shorter row's test a `done` callback.
  const rows = CASES.map(([form, address, standing, embedded]) => [form, address, standing, embedded ?? ""] as const);
  it.each(rows)("%s %s is %s", (_form, address, standing, embedded) => {
    const strict = checkAddress(address, false);
    const lenient = checkAddress(address, true);
    expect({ strict: strict.allowed, lenient: lenient.allowed }).toEqual({
      strict: standing === "public",
      lenient: standing !== "never",
    });
    if (!strict.allowed) {
      expect(strict.reason).toContain(address);
      if (embedded) expect(strict.reason).toContain(`embeds ${embedded}`);
      expect(strict.reason.includes("ALLOW_PRIVATE_CALLBACKS is off")).toBe(standing === "private");
    }
  });

  it("takes a bracketed literal as a URL's host gives it", () => {
    expect(checkAddress("[64:ff9b::7f00:1]", false)).toMatchObject({ allowed: false });
    expect(checkAddress("[64:ff9b::808:808]", false)).toEqual({ allowed: true });
  });

  it.each(["localhost", "127.1", "0x7f.1", "2130706433", "", "::ffff:127.0.0.1:80"])(
    "refuses %p as not an IP address",
    (address) => {
      expect(checkAddress(address, true)).toEqual({
        allowed: false,
        reason: expect.stringContaining("is not an IP address"),
      });
    },
  );
});

const AWB = "020-12345675";
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

describe("embedded-IPv4 callbacks over the real server", () => {
  const disposers = new Disposers();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let strict: Awaited<ReturnType<typeof startApp>>;
  let lenient: Awaited<ReturnType<typeof startApp>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    strict = await startApp("pglite", disposers, {
      ALLOW_PRIVATE_CALLBACKS: "false",
      DELIVERY_RETRY_SCHEDULE: "1s",
      DELIVERY_POLL_MS: "50",
    });
    lenient = await startApp("pglite", disposers, { ALLOW_PRIVATE_CALLBACKS: "true", DELIVERY_WORKER: "false" });
  }, 120_000);
  afterAll(() => disposers.disposeAll());
  const port = () => new URL(receiver.url).port;

  it.each([
    ["NAT64 loopback", "64:ff9b::7f00:1", "127.0.0.1"],
    ["NAT64 (dotted) private", "64:ff9b::10.0.0.1", "10.0.0.1"],
    ["local-use NAT64 loopback", "64:ff9b:1::7f00:1", "127.0.0.1"],
    ["IPv4-translated loopback", "::ffff:0:7f00:1", "127.0.0.1"],
    ["IPv4-compatible loopback", "::7f00:1", "127.0.0.1"],
    ["6to4 loopback", "2002:7f00:1::1", "127.0.0.1"],
  ])(
    "refuses a subscription to %s [%s] with 422 CALLBACK_INVALID and calls nothing",
    async (_name, address, embedded) => {
      const before = receiver.optionsCount();
      const res = await postJson(
        `${strict.url}/carrier/handling/shipment/subscribe`,
        { awb: AWB, callback: `http://[${address}]:${port()}/ok`, states: "*" },
        admin,
      );
      expect(res.status).toBe(422);
      expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
      expect(res.body).toMatchObject({ code: "CALLBACK_INVALID", status: 422 });
      expect(res.body.detail).toMatch(/not allowed/);
      expect(res.body.detail).toContain(`embeds ${embedded}`);
      expect(receiver.optionsCount()).toBe(before);
    },
  );

  it("refuses a Teredo callback and ones carrying a metadata address even with ALLOW_PRIVATE_CALLBACKS=true", async () => {
    for (const address of [
      "64:ff9b::a9fe:a9fe",
      "2002:a9fe:a9fe::1",
      "::ffff:0:a9fe:a9fe",
      "2001:0:4136:e378:8000:63bf:80ff:fffe",
    ]) {
      const res = await postJson(
        `${lenient.url}/carrier/handling/shipment/subscribe`,
        { awb: AWB, callback: `http://[${address}]:${port()}/ok`, states: "*" },
        admin,
      );
      expect({ address, status: res.status, code: res.body.code }).toEqual({
        address,
        status: 422,
        code: "CALLBACK_INVALID",
      });
    }
  });

  it("refuses to deliver to a stored NAT64 callback that carries a loopback address", async () => {
    const { app, url } = strict;
    const [client] = await app.database.prisma.client.findMany();
    // Stored directly: a subscription made before the policy knew the form.
    const subscription = await app.database.prisma.subscription.create({
      data: { clientId: client!.id, awb: AWB, callback: `http://[64:ff9b::7f00:1]:${port()}/ok/nat64`, states: ["*"] },
    });
    expect((await postJson(`${url}/carrier/handling/shipment/events`, { awb: AWB, state: "DEP" }, admin)).status).toBe(
      202,
    );
    await until(
      async () =>
        (await app.database.prisma.delivery.findFirst({ where: { subscriptionId: subscription.id } }))?.status ===
        "DEAD",
      { what: "the delivery given up" },
    );
    const delivery = await app.database.prisma.delivery.findFirstOrThrow({
      where: { subscriptionId: subscription.id },
      include: { attempts: true },
    });
    expect(delivery.attempts.length).toBeGreaterThan(0);
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({
        statusCode: null,
        error: expect.stringMatching(/not allowed.*embeds 127\.0\.0\.1/),
      });
    }
    expect(receiver.posts).toEqual([]);
  });
});
