import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { freePort } from "./support/private-services";
import { startReceiver } from "./support/receiver";
import { until, within } from "./support/webhooks";

const REPO = path.resolve(__dirname, "..");
const DEMO = path.join(REPO, "dist/scripts/demo.js");
/** Where the README's walkthrough says `npm start` serves. */
const README_GATEWAY = "http://127.0.0.1:8080";
const INGESTION = readFileSync(path.join(REPO, "docs/INGESTION.md"), "utf8");

/** The bodies of the page's fenced code blocks, with their language tag. */
function fencedBlocks(markdown: string): Array<{ lang: string; body: string }> {
  return [...markdown.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}

/** A command line split into words as a POSIX shell would, for the forms the docs use: '…', "…" with $VARS, bare words. */
function shellWords(line: string, vars: Record<string, string>): string[] {
  const expand = (text: string) =>
    text.replace(/\$([A-Z_]+)|\$\{([A-Z_]+)\}/g, (_, a?: string, b?: string) => {
      const name = (a ?? b)!;
      if (!(name in vars)) throw new Error(`the command uses $${name}, which the test does not know`);
      return vars[name]!;
    });
  const words: string[] = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+)|(\s+)/g;
  let word: string | undefined;
  for (const m of line.matchAll(pattern)) {
    if (m[4] !== undefined) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + (m[1] ?? expand(m[2] ?? m[3]!));
  }
  if (word !== undefined) words.push(word);
  return words;
}

interface CurlCommand {
  method: string;
  url: string;
  headers: Record<string, string>;
  file: string;
}

/** The curl commands of `sh` blocks that send a file (`--data-binary @file`), read as curl reads them. */
function curlCommands(markdown: string, vars: Record<string, string>): CurlCommand[] {
  return fencedBlocks(markdown)
    .filter((block) => block.lang === "sh" && block.body.includes("--data-binary @"))
    .map((block) => {
      const words = shellWords(block.body.replace(/\\\n/g, " ").trim(), vars);
      expect(words[0]).toBe("curl");
      const command: Partial<CurlCommand> & { headers: Record<string, string> } = { method: "GET", headers: {} };
      for (let i = 1; i < words.length; i++) {
        const word = words[i]!;
        if (word === "-sS") continue;
        else if (word === "-X") command.method = words[++i]!;
        else if (word === "-H") {
          const [name, ...value] = words[++i]!.split(":");
          command.headers[name!.trim().toLowerCase()] = value.join(":").trim();
        } else if (word === "--data-binary") {
          const data = words[++i]!;
          expect(data.startsWith("@")).toBe(true);
          command.file = data.slice(1);
          if (command.method === "GET") command.method = "POST";
        } else if (!word.startsWith("-")) command.url = word;
        else throw new Error(`curl option ${word} is not read by this test`);
      }
      return command as CurlCommand;
    });
}

describe("docs/INGESTION.md's curl examples, sent to a running gateway as the commands send them", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  const commands = () => curlCommands(INGESTION, { GATEWAY: url, KEY: ADMIN_KEY });
  const send = (command: CurlCommand) =>
    fetch(command.url, {
      method: command.method,
      headers: command.headers,
      body: readFileSync(path.join(REPO, command.file)),
    });

  it("names an FSU and an XFSU file, each shown whole on the page", () => {
    const found = commands().map((c) => [c.file, c.headers["content-type"]]);
    expect(found).toEqual([
      ["docs/examples/fsu-dep.txt", "text/plain"],
      ["docs/examples/xfsu-arr.xml", "application/xml"],
    ]);
    const shown = fencedBlocks(INGESTION).map((block) => block.body);
    for (const [file] of found) expect(shown).toContain(readFileSync(path.join(REPO, file!), "utf8"));
  });

  it("each is accepted (202) and its milestone is in the AWB's history; sent again, a duplicate", async () => {
    const answers: Array<{ status: number; events: Array<{ clientEventId: string; duplicate: boolean }> }> = [];
    for (const command of commands()) {
      const response = await send(command);
      answers.push({ status: response.status, ...((await response.json()) as { events: never[] }) });
    }
    expect(answers.map((a) => [a.status, a.events.length, a.events[0]?.clientEventId.split(":")[0]])).toEqual([
      [202, 1, "fsu"],
      [202, 1, "xfsu"],
    ]);
    expect(answers.every((a) => a.events[0]!.duplicate === false)).toBe(true);

    const history = (await (
      await fetch(`${url}/carrier/handling/shipment/events?awb=020-12345675`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as Array<{ state: string; station: string; flight: string; timestamp: string }>;
    // The history is in the order they happened, and the FSU's "16OCT" takes its year from the day it is read.
    expect(history.map((e) => [e.state, e.station, e.flight]).sort()).toEqual([
      ["ARR", "JFK", "LH400"],
      ["DEP", "FRA", "LH400"],
    ]);
    expect(history.find((e) => e.state === "ARR")!.timestamp).toBe("2026-10-17T00:15:00.000Z"); // 20:15 at JFK (-04:00)

    for (const command of commands()) {
      const again = (await (await send(command)).json()) as { events: Array<{ duplicate: boolean }> };
      expect(again.events.map((e) => e.duplicate)).toEqual([true]);
    }
  });
});

describe("README: callbacks on this machine need ALLOW_PRIVATE_CALLBACKS=true", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());
  const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
  const advice = readme
    .split("\n\n")
    .find((paragraph) => paragraph.includes("need `ALLOW_PRIVATE_CALLBACKS=true`"))
    ?.replace(/\s+/g, " ");

  it.each([
    ["false", 422],
    ["true", 201],
  ])(
    "with ALLOW_PRIVATE_CALLBACKS=%s a receiver on 127.0.0.1 is answered %i, as the README says",
    async (allow, status) => {
      expect(advice).toBeDefined();
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      const { url } = await startApp("pglite", disposers, { ALLOW_PRIVATE_CALLBACKS: allow });
      const response = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ awb: "020-12345675", callback: `${receiver.url}/ok`, states: "*" }),
      });
      expect(response.status).toBe(status);
      if (status === 422) {
        const problem = (await response.json()) as { code: string; detail: string };
        expect(advice).toContain(`${status} \`${problem.code}\``);
        expect(problem.detail.toLowerCase()).toContain(/"(the callback's address is not allowed)"/.exec(advice!)![1]);
      }
    },
  );
});

/** The README's walkthrough: its shell blocks in order, its sample output, its GraphQL subscription. */
function readmeWalkthrough() {
  const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
  const start = readme.indexOf("## Five-minute walkthrough");
  if (start < 0) throw new Error('README.md has no "## Five-minute walkthrough"');
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  const blocks = fencedBlocks(section);
  const sh = blocks.filter((block) => block.lang === "sh").map((block) => block.body);
  if (sh.length !== 5) throw new Error(`the walkthrough has ${sh.length} sh blocks, not the 5 this test runs`);
  const [gateway, demo, receiver, ingest, reads] = sh as [string, string, string, string, string];
  const sample = blocks.find((block) => block.lang === "text")!.body;
  const subscription = blocks.find((block) => block.lang === "graphql")!.body;
  const headers = JSON.parse(/`(\{"Authorization": "[^"]+"\})`/.exec(section)![1]!) as { Authorization: string };
  return { gateway, demo, receiver, ingest, reads, sample, subscription, authorization: headers.Authorization };
}

/** The step names of `npm run demo`'s output lines (continuation lines have none). */
const demoSteps = (output: string) =>
  output
    .split("\n")
    .map((line) => line.slice(0, 14).trim())
    .filter((step) => step !== "" && !step.startsWith("done"));

/**
 * Runs a README shell block with bash, as pasted into a terminal at the repository's root. `npm run
 * demo` runs the built script (the test run built it; `npm run` would build again); nothing else of
 * npm is used by the blocks run here.
 */
function bash(block: string): ChildProcess & { output: () => string; exited: Promise<number | null> } {
  const shim = `npm() {
  if [ "\${1-} \${2-}" != "run demo" ]; then echo "npm $* is not run by this test" >&2; return 127; fi
  shift 2; if [ "\${1-}" = "--" ]; then shift; fi
  ${JSON.stringify(process.execPath)} ${JSON.stringify(DEMO)} "$@"
}
`;
  const child = spawn("bash", ["-euo", "pipefail", "-c", `${shim}${block}`], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, so that stopping it stops the demo it runs too
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return Object.assign(child, { output: () => output, exited });
}

describe("README's walkthrough, run as written against the gateway its first block starts", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());
  const walkthrough = readmeWalkthrough();
  /** What the README's blocks name, as this test serves it: the gateway and the receiver on free ports. */
  let gatewayUrl: string;
  let receiverPort: number;
  const asServed = (block: string) =>
    block.replaceAll(README_GATEWAY, gatewayUrl).replace(/\b9090\b/g, String(receiverPort));
  /** Terminal 2's exports, which the later blocks run after. */
  const terminal2 = () => asServed(walkthrough.demo.slice(0, walkthrough.demo.indexOf("npm run demo")));
  let receiver: ReturnType<typeof bash>;

  beforeAll(async () => {
    // Terminal 1: the README's `npm start`, its settings as written, on a free port.
    const words = shellWords(walkthrough.gateway.replace(/\\\n/g, " ").trim(), {});
    expect(words.slice(-2)).toEqual(["npm", "start"]);
    const env = Object.fromEntries(words.slice(0, -2).map((word) => /^([A-Z_]+)=(.*)$/.exec(word)!.slice(1, 3)));
    expect(env).toMatchObject({ DATA_DIR: "memory://", ALLOW_PRIVATE_CALLBACKS: "true" });
    ({ url: gatewayUrl } = await startApp("pglite", disposers, env));
    receiverPort = await freePort();
    expect(walkthrough.demo).toContain(`GATEWAY=${README_GATEWAY} `);
    expect(walkthrough.receiver).toContain("--receive 9090");
    expect(walkthrough.ingest).toContain('"callback": "http://127.0.0.1:9090/hook"');
  }, 120_000);

  it("terminal 2's npm run demo passes every step, and prints the steps the README shows", async () => {
    const demo = bash(asServed(walkthrough.demo));
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain("done: every step passed");
    expect(demo.output().match(/verified with SIGNING_SECRET/g)).toHaveLength(2);
    expect(demoSteps(demo.output())).toEqual(demoSteps(walkthrough.sample));
  }, 120_000);

  it("by hand: the receiver listens, and the curl commands subscribe it and ingest a JSON milestone and an FSU", async () => {
    receiver = bash(asServed(walkthrough.receiver));
    disposers.add(async () => {
      if (receiver.exitCode === null) process.kill(-receiver.pid!, "SIGTERM");
      await receiver.exited;
    });
    await until(() => receiver.output().startsWith("receiver"), { what: "the receiver to listen", timeoutMs: 60_000 });

    const ingest = bash(`${terminal2()}\n${asServed(walkthrough.ingest)}`);
    expect(await ingest.exited).toBe(0);
    const answers = ingest.output();
    expect(answers).toContain(`"Callback":"http://127.0.0.1:${receiverPort}/hook","States":"*"`);
    expect(answers).toContain('"clientEventId":"walkthrough-1","duplicate":false,"matchedSubscriptions":1');
    expect(answers).toMatch(/"clientEventId":"fsu:[^"]+","duplicate":false,"matchedSubscriptions":1/);

    // Terminal 3 shows both notifications, each signature verified with the README's secret.
    const notifications = () =>
      receiver
        .output()
        .split("\n")
        .filter((line) => line.startsWith("notification"));
    await until(() => notifications().length >= 2, { what: "two notifications at the receiver", timeoutMs: 60_000 });
    expect(
      notifications()
        .map((line) => /^notification +(\w+) 020-12345675 POST \/hook, signature v1,\S+ verified$/.exec(line)?.[1])
        .sort(),
    ).toEqual(["DEP", "RCS"]);
  }, 120_000);

  it("live: the README's subscription, with the Headers tab's key, replays both milestones", async () => {
    const client = createClient({
      url: `${gatewayUrl.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: walkthrough.authorization },
    });
    disposers.add(() => client.dispose());
    const events: Array<Record<string, unknown>> = [];
    const done = new Promise<void>((resolve, reject) =>
      client.subscribe<{ awbStatusChanged: Record<string, unknown> }>(
        { query: walkthrough.subscription },
        {
          next: ({ data, errors }) => {
            if (errors) return reject(new Error(JSON.stringify(errors)));
            events.push(data!.awbStatusChanged);
            if (events.length === 2) resolve();
          },
          error: reject,
          complete: () => reject(new Error("completed before two events")),
        },
      ),
    );
    await within("two live events", 60_000, done);
    expect(events.map((e) => [e.sequence, e.state, e.station, e.flight])).toEqual([
      ["1", "RCS", "FRA", null],
      ["2", "DEP", "FRA", "LH400"],
    ]);
  }, 120_000);

  it("read it back: the history, the Waybill and the Shipment's events in ONE Record, and a station", async () => {
    const reads = bash(`${terminal2()}\n${asServed(walkthrough.reads)}`);
    expect(await reads.exited).toBe(0);
    const output = reads.output();
    expect(output).toContain('"clientEventId":"walkthrough-1"');
    expect(output).toContain('"state":"DEP"');
    expect(output).toContain('"@type":"cargo:Waybill"');
    expect(output).toContain('"cargo:waybillNumber":"12345675"');
    expect(output).toMatch(/"@type":"api:Collection","api:hasTotalItems":2,/);
    expect(output).toContain('"code":"FRA"');
  }, 120_000);
});
