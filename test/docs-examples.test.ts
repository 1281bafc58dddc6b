import { readFileSync } from "node:fs";
import path from "node:path";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { startReceiver } from "./support/receiver";

const REPO = path.resolve(__dirname, "..");
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

describe("README's quick start: callbacks on this machine need ALLOW_PRIVATE_CALLBACKS=true", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());
  const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
  const advice = readme.split("\n- ").find((item) => item.includes("ALLOW_PRIVATE_CALLBACKS=true npm start"));

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
        expect(advice).toContain(`${status}\n  \`${problem.code}\``);
        expect(problem.detail.toLowerCase()).toContain(/"(the callback's address is not allowed)"/.exec(advice!)![1]);
      }
    },
  );
});
