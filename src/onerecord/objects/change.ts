import { AppError, type FieldError } from "../../errors";
import { API, XSD } from "../jsonld-context";
import { isNode, literalOf, newEmbeddedId, type NodeObject, nodesOf, typesOf, valuesOf } from "../jsonld-tree";
import { MAX_CHANGE_OPERATIONS } from "./change-bounds";
import { EVENTS, isCargoProperty, isLogisticsObjectClass } from "./object-model";

/**
 * An api:Change (the specification's "Update a Logistics Object"): read from its expanded tree, and
 * applied to an object's body — deletions first, then additions, all or nothing.
 */

export interface OperationObject {
  /** An XSD datatype for a literal; a class IRI for an embedded object or a link. */
  readonly datatype: string;
  readonly value: string;
}

export interface Operation {
  readonly op: "ADD" | "DELETE";
  /** The object's URI, an embedded object's id ("internal:…"), or a label this change adds ("_:b0"). */
  readonly subject: string;
  readonly predicate: string;
  readonly objects: readonly OperationObject[];
}

export interface Change {
  /** The URI api:hasLogisticsObject names. */
  readonly objectUri: string;
  readonly revision: number;
  readonly description: string | undefined;
  readonly notifyRequestStatusChange: boolean | undefined;
  readonly operations: readonly Operation[];
}

const CHANGE = `${API}Change`;
const term = (name: string) => `${API}${name}`;

/** Reads an api:Change; a body that is not one is refused (400), naming each problem. */
export function readChange(root: NodeObject): Change {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });
  if (!typesOf(root).includes(CHANGE)) problem(`${API}Change`, "the body must be an api:Change");
  const objectUri = valuesOf(root, term("hasLogisticsObject"))[0]?.["@id"];
  if (typeof objectUri !== "string") problem(term("hasLogisticsObject"), "names the logistics object to change");
  const revisionText = literalOf(root, term("hasRevision"));
  const revision = Number(revisionText);
  if (revisionText === undefined || !/^\d+$/.test(revisionText) || revision < 1)
    problem(term("hasRevision"), "is the revision the change applies to: a positive integer");
  const operationNodes = valuesOf(root, term("hasOperation")).filter(isNode);
  if (operationNodes.length > MAX_CHANGE_OPERATIONS)
    problem(
      term("hasOperation"),
      `at most ${MAX_CHANGE_OPERATIONS} operations in one change (MAX_CHANGE_OPERATIONS); send the rest as another change`,
    );
  const operations =
    operationNodes.length > MAX_CHANGE_OPERATIONS
      ? []
      : operationNodes.map((node, i) => readOperation(node, i, problem));
  if (operationNodes.length === 0) problem(term("hasOperation"), "at least one operation");
  if (problems.length > 0)
    throw new AppError("INVALID_LOGISTICS_OBJECT", problems.map((p) => `${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });
  return {
    objectUri: objectUri as string,
    revision,
    description: literalOf(root, term("hasDescription")),
    notifyRequestStatusChange: booleanOf(literalOf(root, term("notifyRequestStatusChange"))),
    operations,
  };
}

function booleanOf(text: string | undefined): boolean | undefined {
  return text === undefined ? undefined : text === "true";
}

/**
 * The Change as the server keeps and shows it: every term typed as the API ontology says (api:p and
 * api:hasDatatype xsd:anyURI, the revision xsd:positiveInteger), whatever form the client used, and
 * every node named after `id` so the names never change.
 */
export function changeNode(change: Change, id: string): NodeObject {
  const anyUri = (value: string) => [{ "@value": value, "@type": `${XSD}anyURI` }];
  return {
    "@id": id,
    "@type": [CHANGE],
    [term("hasLogisticsObject")]: [{ "@id": change.objectUri }],
    [term("hasRevision")]: [{ "@value": String(change.revision), "@type": `${XSD}positiveInteger` }],
    ...(change.description === undefined ? {} : { [term("hasDescription")]: [{ "@value": change.description }] }),
    ...(change.notifyRequestStatusChange === undefined
      ? {}
      : { [term("notifyRequestStatusChange")]: [{ "@value": change.notifyRequestStatusChange }] }),
    [term("hasOperation")]: change.operations.map((operation, i) => ({
      "@id": `${id}-operation-${i + 1}`,
      "@type": [term("Operation")],
      [term("op")]: [{ "@id": term(operation.op) }],
      [term("s")]: [{ "@value": operation.subject }],
      [term("p")]: anyUri(operation.predicate),
      [term("o")]: operation.objects.map((object, j) => ({
        "@id": `${id}-operation-${i + 1}-object-${j + 1}`,
        "@type": [term("OperationObject")],
        [term("hasDatatype")]: anyUri(object.datatype),
        [term("hasValue")]: [{ "@value": object.value }],
      })),
    })),
  };
}

function readOperation(node: NodeObject, index: number, problem: (field: string, message: string) => void): Operation {
  const opIri = valuesOf(node, term("op"))[0]?.["@id"];
  const op = opIri === term("ADD") ? "ADD" : opIri === term("DELETE") ? "DELETE" : undefined;
  if (op === undefined) problem(term("op"), `operation ${index + 1}: api:op must be api:ADD or api:DELETE`);
  const subject = literalOf(node, term("s"));
  if (subject === undefined) problem(term("s"), `operation ${index + 1}: api:s names the subject`);
  const predicate = literalOf(node, term("p")) ?? (valuesOf(node, term("p"))[0]?.["@id"] as string | undefined);
  if (predicate === undefined) problem(term("p"), `operation ${index + 1}: api:p names the property`);
  else if (predicate === EVENTS)
    problem(EVENTS, "logistics events of a logistics object cannot be changed; post them to its logistics-events");
  else if (!isCargoProperty(predicate))
    problem(predicate, `operation ${index + 1}: not a property of the cargo ontology`);
  const objects = valuesOf(node, term("o")).map((value): OperationObject | undefined => {
    if (!isNode(value))
      return "@value" in value ? { datatype: `${XSD}string`, value: String(value["@value"]) } : undefined;
    const datatype =
      literalOf(value, term("hasDatatype")) ?? (valuesOf(value, term("hasDatatype"))[0]?.["@id"] as string);
    const text = literalOf(value, term("hasValue"));
    return datatype === undefined || text === undefined ? undefined : { datatype, value: text };
  });
  // The API ontology: an Operation has exactly one api:o.
  if (objects.length !== 1)
    problem(term("o"), `operation ${index + 1}: has exactly one api:o (it has ${objects.length})`);
  else if (objects[0] === undefined)
    problem(term("o"), `operation ${index + 1}: api:o is an api:OperationObject with hasDatatype and hasValue`);
  return {
    op: op ?? "ADD",
    subject: subject ?? "",
    predicate: predicate ?? "",
    objects: objects.filter((o): o is OperationObject => o !== undefined),
  };
}

/**
 * What makes a Change's operations unusable whatever the object holds: blank node labels ("_:b0") are
 * nodes the change embeds, each embedded once, under the object or one of its embedded nodes (never
 * under itself through other labels), and only ADD creates them. `subjectExists` tells the object's own
 * URI and its embedded node ids; without it, the subjects that are not labels are not checked.
 */
export function operationProblems(
  operations: readonly Operation[],
  subjectExists?: (subject: string) => boolean,
): FieldError[] {
  const problems: FieldError[] = [];
  const problem = (index: number, field: string, message: string) =>
    problems.push({ field, message: `operation ${index + 1}: ${message}` });
  /** Each label the change embeds, with the subject it is embedded under. */
  const parents = new Map<string, string>();
  operations.forEach((operation, i) => {
    for (const object of operation.objects) {
      if (!isLabel(object.value) || isXsd(object.datatype)) continue;
      if (operation.op === "DELETE")
        problem(i, term("o"), `${object.value} is a node this change adds: DELETE cannot name it`);
      else if (isLogisticsObjectClass(object.datatype))
        problem(i, term("hasDatatype"), `a change cannot create a logistics object (${object.datatype})`);
      else if (parents.has(object.value)) problem(i, term("o"), `${object.value} is embedded once, not twice`);
      else parents.set(object.value, operation.subject);
    }
  });
  operations.forEach((operation, i) => {
    const { subject } = operation;
    if (isLabel(subject)) {
      if (operation.op === "DELETE") problem(i, term("s"), `${subject} is a node this change adds: nothing to delete`);
      else if (!parents.has(subject)) problem(i, term("s"), `${subject} is not a node this change adds`);
    } else if (subjectExists && !subjectExists(subject))
      problem(i, term("s"), `${subject} is neither the logistics object nor one of its embedded objects`);
  });
  for (const label of parents.keys()) {
    const path = new Set<string>([label]);
    for (let parent = parents.get(label); parent !== undefined && isLabel(parent); parent = parents.get(parent)) {
      if (path.has(parent)) {
        problems.push({ field: term("o"), message: `${label} would be embedded in itself` });
        break;
      }
      path.add(parent);
    }
  }
  return problems;
}

/** Refuses (400) a Change whose operations cannot apply; see operationProblems. */
export function checkOperations(operations: readonly Operation[], subjectExists?: (subject: string) => boolean): void {
  const problems = operationProblems(operations, subjectExists);
  if (problems.length > 0)
    throw new AppError("INVALID_LOGISTICS_OBJECT", problems.map((p) => p.message).join("; "), { errors: problems });
}

const isLabel = (value: string) => value.startsWith("_:");

/** Why a change cannot be applied: the action request fails with it. */
export class ChangeNotApplicable extends Error {}

/**
 * The body after the change: a copy, `body` is left as it was. `isRoot` tells the object's own URI
 * among the subjects; `localIdOf` maps a linked object's URI to the local id the body stores (undefined
 * for another server's). Throws ChangeNotApplicable.
 */
export function applyChange(
  body: NodeObject,
  operations: readonly Operation[],
  { isRoot, localIdOf }: { isRoot: (subject: string) => boolean; localIdOf: (uri: string) => string | undefined },
): NodeObject {
  const problems = operationProblems(operations);
  if (problems.length > 0) throw new ChangeNotApplicable(problems.map((p) => p.message).join("; "));
  const result = structuredClone(body);
  const nodes = new Map(nodesOf(result).map((node) => [node["@id"] as string, node]));
  const root = result;
  const added = new Map<string, NodeObject>();
  for (const operation of operations)
    for (const object of operation.objects)
      if (operation.op === "ADD" && object.value.startsWith("_:") && !isXsd(object.datatype)) {
        if (isLogisticsObjectClass(object.datatype))
          throw new ChangeNotApplicable(`a change cannot create a logistics object (${object.datatype})`);
        if (!added.has(object.value)) added.set(object.value, { "@id": newEmbeddedId(), "@type": [object.datatype] });
      }
  const subjectNode = (subject: string): NodeObject => {
    const node = isRoot(subject) ? root : (added.get(subject) ?? nodes.get(subject));
    if (!node) throw new ChangeNotApplicable(`${subject} is neither the object nor one of its embedded objects`);
    return node;
  };
  const ordered = [...operations.filter((o) => o.op === "DELETE"), ...operations.filter((o) => o.op === "ADD")];
  for (const operation of ordered) {
    const node = subjectNode(operation.subject);
    for (const object of operation.objects) {
      if (operation.op === "DELETE") deleteValue(node, operation.predicate, object, localIdOf);
      else addValue(node, operation.predicate, object, added, localIdOf);
    }
  }
  return result;
}

function deleteValue(
  node: NodeObject,
  predicate: string,
  object: OperationObject,
  localIdOf: (uri: string) => string | undefined,
): void {
  const values = valuesOf(node, predicate);
  const target = isXsd(object.datatype) ? undefined : (localIdOf(object.value) ?? object.value);
  const at = values.findIndex((value) =>
    target === undefined ? "@value" in value && sameLiteral(value["@value"], object.value) : value["@id"] === target,
  );
  if (at < 0) throw new ChangeNotApplicable(`${predicate} holds no ${JSON.stringify(object.value)} to delete`);
  const rest = values.filter((_, i) => i !== at);
  if (rest.length === 0) delete node[predicate];
  else node[predicate] = rest;
}

function addValue(
  node: NodeObject,
  predicate: string,
  object: OperationObject,
  added: ReadonlyMap<string, NodeObject>,
  localIdOf: (uri: string) => string | undefined,
): void {
  let value: unknown;
  if (isXsd(object.datatype)) value = literal(object);
  else if (object.value.startsWith("_:")) value = added.get(object.value);
  else value = { "@id": localIdOf(object.value) ?? object.value };
  node[predicate] = [...valuesOf(node, predicate), value];
}

function literal({ datatype, value }: OperationObject): Record<string, unknown> {
  if (datatype === `${XSD}string`) return { "@value": value };
  if (datatype === `${XSD}boolean`) {
    if (value !== "true" && value !== "false") throw new ChangeNotApplicable(`${value} is not an xsd:boolean`);
    return { "@value": value === "true" };
  }
  return { "@value": value, "@type": datatype };
}

function sameLiteral(stored: unknown, given: string): boolean {
  if (String(stored) === given) return true;
  const [a, b] = [Number(stored), Number(given)];
  return typeof stored !== "boolean" && given.trim() !== "" && Number.isFinite(a) && a === b;
}

function isXsd(datatype: string): boolean {
  return datatype.startsWith(XSD);
}
