import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parse, stringify } from "yaml";
import { Disposers, startApp } from "./support/harness";

const REPO = path.resolve(__dirname, "..");
const RULES_FILE = path.join(REPO, "deploy/prometheus/alerts.yml");
const RULE_TESTS_FILE = path.join(REPO, "deploy/prometheus/alerts.test.yml");
const DASHBOARD_FILE = path.join(REPO, "deploy/grafana/gateway.json");
const DEPLOYMENT = readFileSync(path.join(REPO, "docs/DEPLOYMENT.md"), "utf8");

const run = promisify(execFile);
/** Prometheus's own checker, from Debian's `prometheus` package (.ci/run installs the tool alone). */
const PROMTOOL = process.env.PROMTOOL ?? "promtool";

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const rulesDocument = () =>
  parse(readFileSync(RULES_FILE, "utf8")) as { groups: Array<{ name: string; rules: Rule[] }> };
const rules = () => rulesDocument().groups.flatMap((group) => group.rules);

interface Panel {
  type: string;
  title: string;
  description?: string;
  targets?: Array<{ expr: string }>;
}
const dashboard = () => JSON.parse(readFileSync(DASHBOARD_FILE, "utf8")) as { panels: Panel[] };
/** The dashboard's queries, with Grafana's own variables given a value Prometheus would see. */
const dashboardQueries = () =>
  dashboard()
    .panels.flatMap((panel) => panel.targets ?? [])
    .map((target) => target.expr.replaceAll("$__rate_interval", "5m"));

const PROMQL_KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without", "on"]);

/**
 * The metric names a PromQL expression selects: label matchers, ranges, strings and grouping
 * clauses removed, then every identifier that is not a function or aggregation (followed by "(")
 * and not a keyword.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = [...bare.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((name) => !PROMQL_KEYWORDS.has(name.toLowerCase()));
  return [...new Set(names)];
}

/** Names /metrics declares (`# TYPE name type`), with a histogram's series names. */
function exposedNames(metricsText: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of metricsText.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${name}${suffix}`);
  }
  return names;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\s-]/g, "")
    .replace(/\s/g, "-");

describe("the PromQL reader this test uses", () => {
  it("finds the metrics of an expression and nothing else", () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le) (rate(gateway_event_to_delivery_seconds_bucket{job=~"a|b"}[15m]))) > 60',
      ),
    ).toEqual(["gateway_event_to_delivery_seconds_bucket"]);
    expect(
      metricNames('max without (instance) (x_total offset 5m) / on (job) group_left (le) y{a="up"} and up'),
    ).toEqual(["x_total", "y", "up"]);
  });
});

describe("deploy/prometheus/alerts.yml", () => {
  it("has the shape Prometheus loads: groups of rules, each alert with its expression, labels and annotations", () => {
    const document = rulesDocument();
    expect(Object.keys(document)).toEqual(["groups"]);
    expect(document.groups.length).toBeGreaterThan(0);
    const names = new Set<string>();
    for (const group of document.groups) {
      expect(Object.keys(group).sort()).toEqual(["name", "rules"]);
      for (const rule of group.rules) {
        expect(Object.keys(rule).every((key) => ["alert", "expr", "for", "labels", "annotations"].includes(key))).toBe(
          true,
        );
        expect(rule.alert).toMatch(/^Gateway[A-Z][A-Za-z]+$/);
        expect(names.has(rule.alert)).toBe(false);
        names.add(rule.alert);
        expect(typeof rule.expr).toBe("string");
        if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
        expect(["critical", "warning", "info"]).toContain(rule.labels.severity);
        expect(Object.keys(rule.annotations).sort()).toEqual(["description", "runbook_url", "summary"]);
      }
    }
  });

  it("covers what an operator must hear of, each with a runbook section in docs/DEPLOYMENT.md and none without", () => {
    const byMetric = (metric: string) => rules().filter((rule) => metricNames(rule.expr).includes(metric));
    for (const metric of [
      "gateway_broker_consuming",
      "gateway_delivery_queue_depth",
      "gateway_delivery_oldest_due_age_seconds",
      "gateway_deliveries_total",
      "gateway_delivery_circuits_open",
      "gateway_subscriptions_disabled_total",
      "gateway_log_lines_dropped_total",
      "gateway_live_sockets",
      "gateway_retention_runs_total",
      "gateway_rate_limit_fallbacks_total",
    ])
      expect([metric, byMetric(metric).length > 0]).toEqual([metric, true]);
    // The dead letters are the deliveries that died (outcome label values: src/delivery/delivery.metrics.ts).
    expect(rules().some((rule) => rule.expr.includes('gateway_deliveries_total{outcome="dead"}'))).toBe(true);

    const section = DEPLOYMENT.split("\n## Alerts: what each means and what to do\n")[1]!.split(/\n## /)[0]!;
    const headings = [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]!);
    expect(headings.sort()).toEqual(
      rules()
        .map((rule) => rule.alert)
        .sort(),
    );
    for (const rule of rules()) expect(rule.annotations.runbook_url).toBe(`docs/DEPLOYMENT.md#${anchorOf(rule.alert)}`);
  });
});

const promtoolMissing = (() => {
  try {
    execFileSync(PROMTOOL, ["--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return `${PROMTOOL} is not installed (Debian's prometheus package has it; .ci/run installs it)`;
  }
})();
if (promtoolMissing && process.env.REQUIRE_PROMTOOL === "1")
  throw new Error(`${promtoolMissing}; REQUIRE_PROMTOOL=1 makes that fatal`);
const describePromtool = promtoolMissing
  ? (name: string, fn: () => void) => describe.skip(`${name} — SKIPPED: ${promtoolMissing}`, fn)
  : describe;

describePromtool("promtool, as Prometheus would load them", () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), "gw-promtool-"));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("checks the alert rules: every expression parses, every template too", async () => {
    const { stdout } = await run(PROMTOOL, ["check", "rules", RULES_FILE]);
    expect(stdout).toContain(`SUCCESS: ${rules().length} rules found`);
  });

  it("refuses a rules file with a broken expression (the check can fail)", async () => {
    const broken = path.join(scratch, "broken.yml");
    writeFileSync(
      broken,
      readFileSync(RULES_FILE, "utf8").replace("gateway_broker_consuming == 0", "gateway_broker_consuming == == 0"),
    );
    await expect(run(PROMTOOL, ["check", "rules", broken])).rejects.toMatchObject({ code: 1 });
  });

  it("runs the rules' unit tests (alerts.test.yml): when each alert fires, with which labels, and when not", async () => {
    // promtool compares annotations whole: the tests are of the expressions, so they run on a copy without them.
    const document = rulesDocument();
    for (const group of document.groups) for (const rule of group.rules) delete (rule as Partial<Rule>).annotations;
    writeFileSync(path.join(scratch, "alerts.yml"), stringify(document));
    copyFileSync(RULE_TESTS_FILE, path.join(scratch, "alerts.test.yml"));
    const tested = (
      parse(readFileSync(RULE_TESTS_FILE, "utf8")) as {
        tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
      }
    ).tests.flatMap((test) => test.alert_rule_test);
    // Every alert is shown firing at least once.
    expect([...new Set(tested.filter((t) => t.exp_alerts.length > 0).map((t) => t.alertname))].sort()).toEqual(
      rules()
        .map((rule) => rule.alert)
        .sort(),
    );
    const { stdout } = await run(PROMTOOL, ["test", "rules", path.join(scratch, "alerts.test.yml")]);
    expect(stdout).toContain("SUCCESS");
  });

  it("parses every query of the Grafana dashboard (as recording rules)", async () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(20);
    const file = path.join(scratch, "dashboard-queries.yml");
    writeFileSync(
      file,
      stringify({
        groups: [{ name: "dashboard", rules: queries.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }],
      }),
    );
    const { stdout } = await run(PROMTOOL, ["check", "rules", file]);
    expect(stdout).toContain(`SUCCESS: ${queries.length} rules found`);
  });
});

describe("every metric the rules and the dashboard name is on a running gateway's /metrics", () => {
  const disposers = new Disposers();
  let exposed: Set<string>;
  beforeAll(async () => {
    const queue = `cgw-monitoring-${process.pid}-${Date.now()}`;
    // The broker's metrics exist with AMQP_URL; retention's run counter once a run has happened.
    const { url } = await startApp("pglite", disposers, {
      AMQP_URL: "amqp://guest:guest@127.0.0.1:5672",
      AMQP_QUEUE: queue,
      REDIS_URL: "redis://127.0.0.1:6379",
    });
    disposers.add(async () => {
      const { connect } = await import("amqplib");
      const connection = await connect("amqp://guest:guest@127.0.0.1:5672");
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue);
      await channel.deleteQueue(`${queue}.dead`);
      await connection.close();
    });
    exposed = exposedNames(await (await fetch(`${url}/metrics`)).text());
  });
  afterAll(() => disposers.disposeAll());

  /** `up` is Prometheus's own series for every target, not the gateway's. */
  const PROMETHEUS_OWN = new Set(["up"]);

  it.each([
    ["alerts.yml", () => rules().map((rule) => rule.expr)],
    ["gateway.json", dashboardQueries],
  ])("%s", (_file, exprs) => {
    const missing: string[] = [];
    for (const expr of exprs()) {
      const names = metricNames(expr);
      expect([expr, names.length > 0]).toEqual([expr, true]);
      for (const name of names) if (!exposed.has(name) && !PROMETHEUS_OWN.has(name)) missing.push(name);
    }
    expect(missing).toEqual([]);
  });

  it("and the dashboard shows every gateway_* metric /metrics has", () => {
    const shown = new Set(dashboardQueries().flatMap(metricNames));
    const base = (name: string) => name.replace(/_(bucket|sum|count)$/, "");
    const unshown = [...exposed].filter(
      (name) => name.startsWith("gateway_") && !shown.has(name) && ![...shown].some((s) => base(s) === name),
    );
    expect(unshown.filter((name) => !/_(bucket|sum|count)$/.test(name))).toEqual([]);
  });
});
