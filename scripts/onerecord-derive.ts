// npm run onerecord:derive -- <ONE Record reference folder>
//
// Derives from IATA's ONE Record reference material (the ontologies of the 2025-07 and 2026-07
// standards, the API specification's pages and examples) what the gateway and its tests use, into the
// repository, which never reads the reference folder itself:
//   src/onerecord/vocabulary/{cargo,api,code-lists,context}.json   (README.md there says what each holds)
//   test/onerecord/shapes.ttl                                      SHACL shapes for the conformance checker
//   test/onerecord/examples/                                       the specification's examples, index.json
// The output depends on the reference files only: deriving twice gives the same bytes.
import { existsSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import path from "node:path";
import { stableJson, writeIfChanged } from "./onerecord/derived-files";
import { readErrorTitles } from "./onerecord/error-titles";
import { jsonLdContext } from "./onerecord/json-ld-context";
import { API, CARGO, CODES } from "./onerecord/namespaces";
import { loadTurtle, mergeModels, readHeader, readModel, type OntologyModel } from "./onerecord/ontology-model";
import { shaclShapes } from "./onerecord/shacl-shapes";
import { specificationExamples } from "./onerecord/specification-examples";
import { SPECIFICATION_REQUIREMENTS } from "./onerecord/specification-requirements";
import { apiVocabulary, cargoVocabulary, codeListsVocabulary, type Release } from "./onerecord/vocabulary-json";

const COMMAND = "npm run onerecord:derive -- <ONE Record reference folder>";
const ONTOLOGY_IRIS = {
  cargo: CARGO.slice(0, -1),
  api: API.slice(0, -1),
  codeLists: CODES.slice(0, -1),
};
const VOCABULARY = "src/onerecord/vocabulary";
const EXAMPLES = "test/onerecord/examples";
const LICENCE_COPY = "ONE-Record-LICENSE";

const root = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? "../.." : "..");

function derive(referenceFolder: string): Map<string, string> {
  const source = (...parts: string[]) => {
    const file = path.join(referenceFolder, ...parts);
    if (!existsSync(file))
      throw new Error(`${file} is missing: is ${referenceFolder} the ONE Record reference folder?`);
    return file;
  };
  const standard = (year: string) => {
    const cargoStore = loadTurtle(
      source("ontology", year, "IATA-1R-DM-Ontology.ttl"),
      // The cargo ontology owl:imports the code lists by URL: read the copy beside it instead.
      source("ontology", year, "IATA-1R-CL-Ontology.ttl"),
    );
    const apiStore = loadTurtle(source("ontology", year, "ONE-Record-API-Ontology.ttl"));
    return {
      cargo: { header: readHeader(cargoStore, ONTOLOGY_IRIS.cargo), model: readModel(cargoStore) },
      codeLists: readHeader(cargoStore, ONTOLOGY_IRIS.codeLists),
      api: { header: readHeader(apiStore, ONTOLOGY_IRIS.api), model: readModel(apiStore) },
    };
  };
  const current = standard("2026-07");
  const previous = standard("2025-07");
  const both = mergeModels(current.cargo.model, current.api.model);
  checkSpecificationRequirements(both);
  const pages = readdirSync(source("api")).filter((name) => name.endsWith(".md"));
  const errorTitles = readErrorTitles(...pages.sort().map((name) => readFileSync(source("api", name), "utf8")));
  const examples = specificationExamples(referenceFolder);
  const licence = readFileSync(source("LICENSE"), "utf8");

  const files = new Map<string, string>([
    [`${VOCABULARY}/cargo.json`, stableJson(cargoVocabulary(current.cargo, previous.cargo, current.codeLists))],
    [`${VOCABULARY}/api.json`, stableJson(apiVocabulary(current.api, previous.api, errorTitles))],
    [`${VOCABULARY}/code-lists.json`, stableJson(codeListsVocabulary(current.cargo, current.codeLists))],
    [`${VOCABULARY}/context.json`, stableJson(jsonLdContext(current.api.model))],
    [`${VOCABULARY}/${LICENCE_COPY}`, licence],
    ["test/onerecord/shapes.ttl", shaclShapes(both, headersOf(current), COMMAND)],
    [`${EXAMPLES}/index.json`, stableJson(examples.index)],
    [`${EXAMPLES}/${LICENCE_COPY}`, licence],
  ]);
  for (const [name, content] of examples.copies) files.set(`${EXAMPLES}/${name}`, content);
  return files;
}

function headersOf(standard: { cargo: Release; api: Release; codeLists: Release["header"] }) {
  return [standard.cargo.header, standard.codeLists, standard.api.header];
}

/** Each place where the derived files follow the specification's text must still be a restriction of the ontology. */
function checkSpecificationRequirements(model: OntologyModel): void {
  for (const { classIri, propertyIri } of SPECIFICATION_REQUIREMENTS) {
    if (model.classes.get(classIri)?.properties.has(propertyIri) !== true)
      throw new Error(`specification-requirements.ts: ${classIri} has no restriction on ${propertyIri} any more`);
  }
}

function write(files: Map<string, string>): { written: string[]; removed: string[] } {
  const written = [...files]
    .filter(([file, content]) => writeIfChanged(path.join(root, file), content))
    .map(([f]) => f);
  // Examples that the reference folder no longer has go too: the folder mirrors it.
  const removed = readdirSync(path.join(root, EXAMPLES))
    .map((name) => `${EXAMPLES}/${name}`)
    .filter((file) => !files.has(file));
  for (const file of removed) unlinkSync(path.join(root, file));
  return { written, removed };
}

function main(args: string[]): void {
  if (args.length !== 1 || args[0] === undefined || args[0].startsWith("-")) {
    console.error(`usage: ${COMMAND}`);
    process.exit(2);
  }
  const files = derive(path.resolve(args[0]));
  const { written, removed } = write(files);
  for (const file of written) console.log(`wrote ${file}`);
  for (const file of removed) console.log(`removed ${file}`);
  console.log(`${files.size} derived files, ${written.length} changed, ${removed.length} removed`);
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
