import { spawn } from "node:child_process";
import path from "node:path";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";

const DEMO = path.resolve(__dirname, "../dist/scripts/demo.js");

/** The steps `npm run demo` prints, in order, when every one passes (the name column of its output). */
const STEPS = [
  "gateway",
  "receiver",
  "live",
  "subscribe",
  "ingest JSON",
  "ingest FSU",
  "notification",
  "notification",
  "live event",
  "live event",
  "ONE Record",
  "unsubscribe",
];

/** Runs the built demo as its own process (what `npm run demo` runs after the build) until it exits. */
function runDemo(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [DEMO, ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The step names of the demo's output lines (continuation lines have none). */
const stepsOf = (output: string) =>
  output
    .split("\n")
    .map((line) => line.slice(0, 14).trim())
    .filter((step) => step !== "" && !step.startsWith("done"));

describe("npm run demo against a running gateway", () => {
  const disposers = new Disposers();
  let url: string;
  let secret: string;
  beforeAll(async () => {
    const started = await startApp("pglite", disposers);
    url = started.url;
    if (!started.app.bootstrap.created) throw new Error("the gateway under test made no first client");
    // What the first start prints: the key (here the harness's, chosen) and the generated signing secret.
    secret = started.app.bootstrap.generated.signingSecret!;
  });
  afterAll(() => disposers.disposeAll());

  it("walks every step, verifies both notifications' signatures, and leaves no subscription behind", async () => {
    const run = await runDemo({ GATEWAY: url, KEY: ADMIN_KEY, SIGNING_SECRET: secret });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(stepsOf(run.stdout)).toEqual(STEPS);
    expect(run.stdout).toContain("done: every step passed");

    const awb = /this run's AWB is (\d{3}-\d{8})/.exec(run.stdout)![1]!;
    const verified = [...run.stdout.matchAll(/signature (v1,[A-Za-z0-9+/]{43}=) verified with SIGNING_SECRET/g)];
    expect(verified).toHaveLength(2);
    expect(run.stdout).toMatch(/live event +#1 RCS at FRA\n/);
    expect(run.stdout).toMatch(/live event +#2 DEP at FRA on LH400\n/);
    expect(run.stdout).toContain(`→ 2 StatusUpdateEvents: RCS, DEP`);

    const authorization = { authorization: `Bearer ${ADMIN_KEY}` };
    const history = await getJson(`${url}/carrier/handling/shipment/events?awb=${awb}`, { headers: authorization });
    expect((history.body as Array<{ state: string }>).map((event) => event.state).sort()).toEqual(["DEP", "RCS"]);
    const left = await getJson(`${url}/carrier/handling/shipment/subscribe?awb=${awb}`, { headers: authorization });
    expect(left.body).toEqual([]);
  }, 120_000);

  it("fails, naming the notification, when the signature does not verify with SIGNING_SECRET", async () => {
    const wrong = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const run = await runDemo({ GATEWAY: url, KEY: ADMIN_KEY, SIGNING_SECRET: wrong });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^FAILED {2}notification [0-9a-f-]{36}: its signature does not verify with SIGNING_SECRET/,
    );
    expect(stepsOf(run.stdout)).not.toContain("notification");
    expect(stepsOf(run.stdout)).toContain("unsubscribe"); // cleaned up after the failure too
  }, 120_000);

  it("fails at the first step that fails, with what the gateway answered", async () => {
    const run = await runDemo({ GATEWAY: url, KEY: "cgw_not-a-key-of-this-gateway-01", SIGNING_SECRET: secret });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("subscribe: POST /carrier/handling/shipment/subscribe answered 401, not 201");
  }, 120_000);

  it("without KEY or SIGNING_SECRET, says which and exits 2", async () => {
    const run = await runDemo({ GATEWAY: url });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("set KEY (the API key the gateway's first start printed) and SIGNING_SECRET");
  });
});

describe("npm run demo against a gateway that refuses callbacks to this machine", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("fails at the subscription and says to start the gateway with ALLOW_PRIVATE_CALLBACKS=true", async () => {
    const { url, app } = await startApp("pglite", disposers, { ALLOW_PRIVATE_CALLBACKS: "false" });
    if (!app.bootstrap.created) throw new Error("the gateway under test made no first client");
    const secret = app.bootstrap.generated.signingSecret!;
    const run = await runDemo({ GATEWAY: url, KEY: ADMIN_KEY, SIGNING_SECRET: secret });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("answered 422, not 201 (start the gateway with ALLOW_PRIVATE_CALLBACKS=true)");
  }, 120_000);
});
