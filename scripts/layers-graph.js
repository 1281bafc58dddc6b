// Draws the layers of .dependency-cruiser.cjs and the imports between them, from dependency-cruiser's
// JSON output, as a Mermaid graph between the markers in docs/ARCHITECTURE.md.
//   npm run docs:layers            rewrite the graph
//   npm run docs:layers -- --check  exit 1 when the committed graph is not what the code draws
//   --doc <file>                     another copy of the document (the test's)
//   --cruise <file>                  draw from this result of cruise() (dependency-cruiser's JSON) instead
//                                    of cruising again (the test's: one cruise for its three runs)
// Fails on a module of src/ that no layer holds.
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const DOC_ARG = process.argv.indexOf("--doc");
const DOC = DOC_ARG > 0 ? path.resolve(process.argv[DOC_ARG + 1]) : path.join(ROOT, "docs", "ARCHITECTURE.md");
const CRUISE_ARG = process.argv.indexOf("--cruise");
const BEGIN = "<!-- layers:begin (drawn by npm run docs:layers from .dependency-cruiser.cjs) -->";
const END = "<!-- layers:end -->";

/**
 * Each src/ module's layer index; a module no layer holds is reported and fails the run, and one that
 * two layers hold fails it at once (the layers' rules would judge it twice).
 */
function layerOf(layers) {
  const matchers = layers.map((layer) => ({
    path: layer.path.map((p) => new RegExp(p)),
    pathNot: (layer.pathNot ?? []).map((p) => new RegExp(p)),
  }));
  return (source) => {
    const holding = matchers.flatMap((m, index) =>
      m.path.some((r) => r.test(source)) && !m.pathNot.some((r) => r.test(source)) ? [index] : [],
    );
    if (holding.length > 1)
      throw new Error(`${source} is in more than one layer of .dependency-cruiser.cjs (${holding.join(", ")})`);
    return holding.length === 1 ? holding[0] : -1;
  };
}

/** A module's folder under src/ ("http/"), or its name when it sits in src/ itself ("app.ts"). */
function placeOf(source) {
  const [, first, rest] = /^src\/([^/]+)(\/.*)?$/.exec(source);
  return rest ? `${first}/` : first;
}

function cruise() {
  const bin = path.join(ROOT, "node_modules", ".bin", "depcruise");
  const json = execFileSync(bin, ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
    encoding: "utf8",
  });
  return JSON.parse(json);
}

/** The Mermaid graph: one node per layer, top down; an edge where a layer imports from another. */
function draw(layers, result) {
  const indexOf = layerOf(layers);
  const unplaced = [];
  const edges = new Set();
  const places = layers.map(() => new Set());
  for (const module of result.modules) {
    if (!module.source.startsWith("src/")) continue;
    const from = indexOf(module.source);
    if (from < 0) {
      unplaced.push(module.source);
      continue;
    }
    places[from].add(placeOf(module.source));
    for (const dependency of module.dependencies) {
      if (!dependency.resolved.startsWith("src/")) continue;
      const to = indexOf(dependency.resolved);
      if (to >= 0 && to !== from) edges.add(`${from}:${to}`);
    }
  }
  if (unplaced.length > 0) throw new Error(`No layer of .dependency-cruiser.cjs holds: ${unplaced.sort().join(", ")}`);
  const lines = ["```mermaid", "flowchart TD"];
  layers.forEach((layer, i) =>
    lines.push(`  L${i}["<b>${layer.name}</b>: ${layer.holds}<br/><i>${[...places[i]].sort().join(" ")}</i>"]`),
  );
  const sorted = [...edges].map((e) => e.split(":").map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  // An import up a layer breaks a rule (npm run lint:deps): drawn dashed, so it shows here too.
  for (const [from, to] of sorted) lines.push(to > from ? `  L${from} --> L${to}` : `  L${from} -. upward .-> L${to}`);
  lines.push("```");
  return lines.join("\n");
}

function withGraph(doc, graph) {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${DOC} has no ${BEGIN} … ${END} markers`);
  return `${doc.slice(0, begin + BEGIN.length)}\n${graph}\n${doc.slice(end)}`;
}

function main() {
  const { layers } = require(path.join(ROOT, ".dependency-cruiser.cjs"));
  const doc = fs.readFileSync(DOC, "utf8");
  const result = CRUISE_ARG > 0 ? JSON.parse(fs.readFileSync(process.argv[CRUISE_ARG + 1], "utf8")) : cruise();
  const updated = withGraph(doc, draw(layers, result));
  if (process.argv.includes("--check")) {
    if (updated !== doc) {
      console.error(`${path.relative(ROOT, DOC)}: the layer graph is stale; run npm run docs:layers`);
      process.exit(1);
    }
    return;
  }
  if (updated !== doc) fs.writeFileSync(DOC, updated);
}

if (require.main === module) main();
module.exports = { cruise };
