import { readFileSync } from "node:fs";
import path from "node:path";
import { describeBackend, Disposers, startApp } from "./support/harness";
import { spawnWorker } from "./support/worker-process";
import { inFullSuite } from "./support/suite";

/**
 * docs/OPERATIONS.md "Metrics" is the reference list of what /metrics serves. A gateway (with and
 * without the settings some metrics depend on) and a standalone worker must serve exactly the metrics
 * it names for them, each of its type, with the labels (and label values) it names.
 */

const OPERATIONS = path.resolve(__dirname, "../docs/OPERATIONS.md");
const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";
const SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");

interface DocumentedMetric {
  readonly name: string;
  readonly type: string;
  /** Label name → its values, when the row lists them. */
  readonly labels: ReadonlyMap<string, readonly string[] | undefined>;
  readonly gateway: boolean;
  readonly worker: boolean;
  /** What "Served by" makes the metric depend on ("with `AMQP_URL`"), if anything. */
  readonly condition: string | undefined;
}

/**
 * The conditions a row's "Served by" may name, and the settings that meet or fail them. A row with a
 * condition not here fails the test, which could not check it.
 */
const CONDITIONS: Record<string, { met: Record<string, string>; unmet: Record<string, string> }> = {
  "with `AMQP_URL`": { met: { AMQP_URL }, unmet: {} },
  "unless `GRAPHQL_RESPONSE_CACHE=false`": { met: {}, unmet: { GRAPHQL_RESPONSE_CACHE: "false" } },
};

/** The rows of the "Metrics" section's table: `| \`name\` | type | labels | served by | meaning |`. */
export function documentedMetrics(markdown: string): DocumentedMetric[] {
  const section = markdown.split("\n## Metrics\n")[1]?.split(/\n## /)[0];
  if (section === undefined) throw new Error("docs/OPERATIONS.md has no '## Metrics' section");
  return [...section.matchAll(/^\| `([^`]+)` \|(.*)\|$/gm)].map(([, name, rest]) => {
    const [type = "", labels = "", servedBy = ""] = rest!.split("|").map((cell) => cell.trim());
    return {
      name: name!,
      type,
      labels: new Map(
        [...labels.matchAll(/`(\w+)`(?::([^;`]+))?/g)].map(([, label, values]) => [
          label!,
          values?.split(",").map((value) => value.trim()),
        ]),
      ),
      gateway: /\bgateway\b/.test(servedBy),
      worker: /\bworker\b/.test(servedBy),
      condition: /\b(?:with|unless) `[^`]+`/.exec(servedBy)?.[0],
    };
  });
}

interface Exposed {
  /** Metric family → its type, from the `# TYPE` lines. */
  readonly types: Map<string, string>;
  /** Families named by `# HELP` lines. */
  readonly helped: Set<string>;
  /** Each sample's family and labels. */
  readonly samples: Array<{ family: string; labels: Array<[string, string]> }>;
}

const SERIES_SUFFIXES: Record<string, readonly string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["_sum", "_count"],
};

/** Reads Prometheus text: every family declared, and which family and labels each sample has. */
export function readExposition(text: string): Exposed {
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const samples: Exposed["samples"] = [];
  for (const line of text.split("\n")) {
    const help = /^# HELP (\S+) /.exec(line);
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (help) helped.add(help[1]!);
    else if (type) types.set(type[1]!, type[2]!);
    else if (line !== "" && !line.startsWith("#")) {
      const [, series, labels = ""] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line) ?? [];
      if (series === undefined) throw new Error(`not a sample line: ${line}`);
      const family =
        [...types].find(([name, kind]) =>
          [name, ...(SERIES_SUFFIXES[kind] ?? []).map((suffix) => name + suffix)].includes(series),
        )?.[0] ?? series;
      const pairs = [...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!] as [string, string]);
      samples.push({ family, labels: pairs });
    }
  }
  return { types, helped, samples };
}

const sorted = (names: Iterable<string>) => [...names].sort();

/**
 * What the reference promises a process: the names it serves, and nothing else; each with the
 * documented type; every label of a sample documented for its metric, with a documented value.
 */
function mismatches(exposed: Exposed, promised: DocumentedMetric[]) {
  const byName = new Map(promised.map((metric) => [metric.name, metric]));
  const all = new Map(documentedMetrics(readFileSync(OPERATIONS, "utf8")).map((metric) => [metric.name, metric]));
  const labelProblems: string[] = [];
  for (const { family, labels } of exposed.samples) {
    const documented = all.get(family)?.labels;
    if (!documented) continue; // an undocumented family is reported as such
    for (const [label, value] of labels) {
      if (!documented.has(label)) labelProblems.push(`${family}{${label}}: label not documented`);
      else if (documented.get(label) && !documented.get(label)!.includes(value))
        labelProblems.push(`${family}{${label}="${value}"}: value not documented`);
    }
  }
  return {
    undocumented: sorted([...exposed.types.keys()].filter((name) => !all.has(name))),
    documentedButNotServed: sorted([...byName.keys()].filter((name) => !exposed.types.has(name))),
    servedHereThoughDocumentedElsewhere: sorted(
      [...exposed.types.keys()].filter((name) => all.has(name) && !byName.has(name)),
    ),
    wrongType: sorted(
      [...exposed.types]
        .filter(([name, type]) => all.has(name) && all.get(name)!.type !== type)
        .map(([name, type]) => `${name}: ${type}, documented ${all.get(name)!.type}`),
    ),
    withoutHelp: sorted([...exposed.types.keys()].filter((name) => !exposed.helped.has(name))),
    labelProblems: sorted(new Set(labelProblems)),
  };
}

const NONE = {
  undocumented: [],
  documentedButNotServed: [],
  servedHereThoughDocumentedElsewhere: [],
  wrongType: [],
  withoutHelp: [],
  labelProblems: [],
};

const reference = () => documentedMetrics(readFileSync(OPERATIONS, "utf8"));

describe("the metrics reference in docs/OPERATIONS.md", () => {
  it("is a table this test reads: each metric once, of a Prometheus type, served by a gateway or a worker, under a condition it knows", () => {
    const metrics = reference();
    expect(metrics.length).toBeGreaterThan(20);
    const names = metrics.map((metric) => metric.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    for (const metric of metrics) {
      expect([metric.name, metric.type]).toEqual([
        metric.name,
        expect.stringMatching(/^(counter|gauge|histogram|summary)$/),
      ]);
      expect([metric.name, metric.gateway || metric.worker]).toEqual([metric.name, true]);
      if (metric.condition === undefined) continue;
      expect(Object.keys(CONDITIONS)).toContain(metric.condition);
      // The worker below is started with its defaults: a condition is checked on gateways only.
      expect([metric.name, metric.worker]).toEqual([metric.name, false]);
    }
  });

  it("and the comparison reports each way a process can differ from it (it can fail)", () => {
    const text = [
      "# HELP gateway_x_total x",
      "# TYPE gateway_x_total counter",
      'gateway_x_total{outcome="nope"} 1',
      "# HELP gateway_delivery_queue_depth d",
      "# TYPE gateway_delivery_queue_depth counter",
      "gateway_delivery_queue_depth 0",
      "# HELP gateway_deliveries_total d",
      "# TYPE gateway_deliveries_total counter",
      'gateway_deliveries_total{outcome="lost"} 1',
      "# TYPE gateway_event_to_delivery_seconds histogram",
      'gateway_event_to_delivery_seconds_bucket{le="0.01",origin="a"} 0',
      "",
    ].join("\n");
    const promised = reference().filter((metric) =>
      ["gateway_deliveries_total", "gateway_event_to_delivery_seconds", "gateway_live_sockets"].includes(metric.name),
    );
    expect(mismatches(readExposition(text), promised)).toEqual({
      undocumented: ["gateway_x_total"],
      documentedButNotServed: ["gateway_live_sockets"],
      servedHereThoughDocumentedElsewhere: ["gateway_delivery_queue_depth"],
      wrongType: ["gateway_delivery_queue_depth: counter, documented gauge"],
      withoutHelp: ["gateway_event_to_delivery_seconds"],
      labelProblems: [
        'gateway_deliveries_total{outcome="lost"}: value not documented',
        "gateway_event_to_delivery_seconds{origin}: label not documented",
      ],
    });
  });
});

describe("a gateway's /metrics (PGlite) serves exactly what the reference lists for a gateway", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  const scrape = async (conditions: "met" | "unmet") => {
    const env: Record<string, string> = Object.fromEntries(
      Object.values(CONDITIONS).flatMap((settings) => Object.entries(settings[conditions])),
    );
    if (env.AMQP_URL) {
      const queue = `cgw-metrics-documented-${process.pid}-${Date.now()}`;
      env.AMQP_QUEUE = queue;
      disposers.add(async () => {
        const { connect } = await import("amqplib");
        const connection = await connect(AMQP_URL);
        const channel = await connection.createChannel();
        await channel.deleteQueue(queue);
        await channel.deleteQueue(`${queue}.dead`);
        await connection.close();
      });
    }
    const { url } = await startApp("pglite", disposers, env);
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    return readExposition(await response.text());
  };

  it("with every condition of the reference met (AMQP_URL set, the response cache on)", async () => {
    const exposed = await scrape("met");
    const promised = reference().filter((metric) => metric.gateway);
    expect(mismatches(exposed, promised)).toEqual(NONE);
  });

  it("with none met: the conditional metrics are not served", async () => {
    const exposed = await scrape("unmet");
    const promised = reference().filter((metric) => metric.gateway && metric.condition === undefined);
    expect(mismatches(exposed, promised)).toEqual(NONE);
  });
});

inFullSuite(describeBackend("postgres"))(
  "a standalone worker's /metrics serves exactly what the reference lists for a worker",
  () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll());

    // dist/src/worker.js, as `npm run worker` runs it: `npm run build` first, like the other process tests.
    it("(the built worker, on the database a gateway migrated)", async () => {
      const { env } = await startApp("postgres", disposers, { SECRETS_KEY });
      const worker = await spawnWorker({
        DATABASE_URL: env.DATABASE_URL!,
        SECRETS_KEY,
        ALLOW_PRIVATE_CALLBACKS: env.ALLOW_PRIVATE_CALLBACKS!,
      });
      disposers.add(async () => {
        worker.child.kill("SIGTERM");
        await worker.exited;
      });
      const response = await fetch(`${worker.url}/metrics`);
      expect(response.status).toBe(200);
      const exposed = readExposition(await response.text());
      const promised = reference().filter((metric) => metric.worker);
      expect(mismatches(exposed, promised)).toEqual(NONE);
    });
  },
);
