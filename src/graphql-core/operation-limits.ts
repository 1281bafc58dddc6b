import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  getNullableType,
  getOperationAST,
  type GraphQLField,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type GraphQLCompositeType,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";
import { AppError } from "../errors";
import { countText, createWalkBudget, saturatingAdd, saturatingMultiply, WalkOverBudget } from "./walk-budget";

/** What one operation may ask for (configurable; see docs/API.md "GraphQL limits"). */
export interface OperationLimits {
  /** Fields resolved, with lists multiplied by their size (see `walkOperation`). */
  readonly maxCost: number;
  /** Aliased fields in one operation: aliases are how one request asks for the same thing many times. */
  readonly maxAliases: number;
  /** Items in any one list argument (codes, AWBs, events…), literal or from variables. */
  readonly maxListArgument: number;
  /**
   * What the aliased fields may cost together, each with all it selects, counted as `maxCost`
   * (MAX_ALIASED_COST; ANONYMOUS_MAX_ALIASED_COST without a key); unset: no bound beyond `maxCost`.
   */
  readonly maxAliasedCost?: number;
  /** Whom the limits hold, as a refusal ends ("without an API key"); unset: every caller. */
  readonly appliesTo?: string;
}

/**
 * What the aliased fields of one operation may cost together. An alias repeats a selection under
 * another name: `maxCost` is sized by the heaviest read without aliases (every field of every
 * station), and the same cost spent on aliases of a light selection answers several times its bytes
 * (30 aliases of ten fields of every station cost 150,030). Within it: 30 aliased single stations
 * with every field but `openAt` (16,170), or a few aliased fields of every station (`openAt` for
 * both sides: 1,000).
 */
export const MAX_ALIASED_COST = 30_000;

/** maxCost: every field of every station costs 269,001 by this measure, the heaviest legitimate query. */
export const DEFAULT_OPERATION_LIMITS: OperationLimits = {
  maxCost: 300_000,
  maxAliases: 30,
  maxListArgument: 1_000,
  maxAliasedCost: MAX_ALIASED_COST,
};

/**
 * The cost of one operation sent without a key: every field of 50 stations (27,001), or 60 per
 * station of every station (a dozen fields of each and both `openAt` cost 11,501). A query's
 * execution holds the event loop (every field of every station, 270,001, for hundreds of
 * milliseconds), and an address may send GRAPHQL_ANONYMOUS_LIMIT_BURST at once.
 */
export const ANONYMOUS_MAX_COST = 30_000;

/**
 * What the aliased fields of an operation sent without a key may cost together (see
 * MAX_ALIASED_COST): a few aliased single stations, or a few aliased fields of every station; not a
 * second list of ten fields of every station (5,001).
 */
export const ANONYMOUS_MAX_ALIASED_COST = 5_000;

/** The limits of an operation sent without a key (or with one that does not authenticate). */
export function anonymousLimitsOf(limits: OperationLimits): OperationLimits {
  return {
    ...limits,
    maxCost: Math.min(limits.maxCost, ANONYMOUS_MAX_COST),
    maxAliasedCost: Math.min(limits.maxAliasedCost ?? Infinity, ANONYMOUS_MAX_ALIASED_COST),
    appliesTo: "without an API key",
  };
}

/** How many items a top-level list is assumed to return when no argument says (more than the carrier has stations). */
const UNBOUNDED_LIST_SIZE = 500;
/** Lists inside objects are small, bounded collections (a week of opening days, a delivery's attempts). */
const NESTED_LIST_SIZE = 10;
/** Arguments that bound a list field's size, in the order they are looked at. */
const SIZE_ARGUMENTS = ["first", "codes", "awbs", "events"] as const;

type Verdict = AppError | undefined;
/** Verdicts per schema and parsed document (Apollo hands the same object for the same text). */
const verdicts = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, Verdict>>>();
/** Verdicts kept per document: one per operation and shape of its list and number variables. */
const MAX_VERDICTS_PER_DOCUMENT = 64;

/**
 * Checks an operation against the limits with its variables, before it runs. Returns an error
 * (code QUERY_TOO_COMPLEX) naming the first limit exceeded, or undefined.
 *
 * The verdict depends on the document, the operation, the limits and, of the variables, only the
 * length of each list and the value of each number (sizes and `first:`), so it is computed once per
 * such shape of a document and then looked up (the walk over the selections was a twentieth of an
 * uncached station query's time).
 */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  limits: OperationLimits = DEFAULT_OPERATION_LIMITS,
): AppError | undefined {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return undefined; // graphql-js reports the missing operation itself
  let ofSchema = verdicts.get(schema);
  if (!ofSchema) verdicts.set(schema, (ofSchema = new WeakMap()));
  let kept = ofSchema.get(document);
  if (!kept) ofSchema.set(document, (kept = new Map<string, Verdict>()));
  const key = `${limits.maxCost}/${limits.maxAliases}/${limits.maxListArgument}/${limits.maxAliasedCost ?? ""}/${limits.appliesTo ?? ""}/${operation.name?.value ?? ""}/${variableShape(operation, variables)}`;
  if (kept.has(key)) return kept.get(key);
  const verdict = walkOperation(schema, document, operation, variables, limits);
  if (kept.size >= MAX_VERDICTS_PER_DOCUMENT) kept.clear();
  kept.set(key, verdict);
  return verdict;
}

/**
 * What of the variables the walk can see: for each variable the operation declares (a GraphQL name,
 * so it cannot hold the separators), its list's length or its number. Keys the request sent beyond
 * the declared ones are not read by the walk and do not enter the key.
 */
function variableShape(
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): string {
  if (!variables || !operation.variableDefinitions) return "";
  let shape = "";
  for (const definition of operation.variableDefinitions) {
    const name = definition.variable.name.value;
    const value = variableValue(variables, name);
    if (Array.isArray(value)) shape += `${name}[${value.length}];`;
    else if (typeof value === "number") shape += `${name}=${value};`;
  }
  return shape;
}

/** A variable's value as the request sent it (its own property: never one inherited by the object). */
function variableValue(variables: Readonly<Record<string, unknown>> | null | undefined, name: string): unknown {
  return variables && Object.hasOwn(variables, name) ? variables[name] : undefined;
}

/**
 * What a selection set adds up to (fragments counted at each spread): its cost, the aliases in it,
 * and the cost of its aliased fields (an aliased field with all it selects, lists multiplied as in the cost).
 */
interface Tally {
  readonly cost: number;
  readonly aliases: number;
  readonly aliasedCost: number;
}

const NOTHING: Tally = { cost: 0, aliases: 0, aliasedCost: 0 };

/**
 * The operation's cost, aliases and list arguments. Each fragment is measured once per type it is
 * spread on and per place (the root, or inside an object: lists are sized differently) and its tally
 * reused at every spread, so the work is linear in the document however often fragments are spread;
 * every selection visited spends the walk budget. A fragment spread while it is being measured (a
 * cycle: graphql-js reports it; over websockets this check runs before validation errors are looked
 * at) counts as nothing.
 */
function walkOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  limits: OperationLimits,
): AppError | undefined {
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);

  const budget = createWalkBudget();
  const measured = new Map<string, Tally>();
  const open = new Set<string>();
  let listProblem: string | undefined;

  const valueOf = (node: ValueNode): unknown =>
    node.kind === Kind.VARIABLE
      ? variableValue(variables, node.name.value)
      : node.kind === Kind.LIST
        ? node.values
        : undefined;
  const lengthOf = (node: ValueNode | undefined): number | undefined => {
    if (!node) return undefined;
    const value = valueOf(node);
    return Array.isArray(value) ? value.length : undefined;
  };
  const numberOf = (node: ValueNode | undefined): number | undefined => {
    if (!node) return undefined;
    if (node.kind === Kind.INT) return Number(node.value);
    const value = node.kind === Kind.VARIABLE ? variableValue(variables, node.name.value) : undefined;
    return typeof value === "number" ? value : undefined;
  };

  const fieldTally = (parent: GraphQLCompositeType, field: FieldNode, atRoot: boolean): Tally => {
    const aliases = field.alias ? 1 : 0;
    const args = new Map(field.arguments?.map((a) => [a.name.value, a.value]) ?? []);
    for (const [name, value] of args) {
      const length = lengthOf(value);
      if (length !== undefined && length > limits.maxListArgument && !listProblem)
        listProblem = `${field.name.value}(${name}:) has ${length} items; at most ${limits.maxListArgument} are allowed`;
    }
    if (!field.selectionSet) return { cost: 1, aliases, aliasedCost: aliases };
    const definition: GraphQLField<unknown, unknown> | undefined =
      isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[field.name.value] : undefined;
    if (!definition) return { cost: 1, aliases, aliasedCost: aliases };
    let size = 1;
    if (isListType(getNullableType(definition.type))) {
      size = atRoot ? UNBOUNDED_LIST_SIZE : NESTED_LIST_SIZE;
      for (const name of SIZE_ARGUMENTS) {
        const bound = name === "first" ? numberOf(args.get(name)) : lengthOf(args.get(name));
        if (bound !== undefined) {
          size = Math.max(0, bound);
          break;
        }
      }
    }
    const childType = getNamedType(definition.type) as GraphQLCompositeType;
    const inside = selectionTally(childType, field.selectionSet, false);
    const cost = saturatingAdd(1, saturatingMultiply(size, inside.cost));
    return {
      cost,
      aliases: saturatingAdd(aliases, inside.aliases),
      aliasedCost: field.alias ? cost : saturatingMultiply(size, inside.aliasedCost),
    };
  };

  const fragmentTally = (parent: GraphQLCompositeType, fragment: FragmentDefinitionNode, atRoot: boolean): Tally => {
    const type = (schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType | undefined) ?? parent;
    const key = `${fragment.name.value}\u0000${type.name}\u0000${atRoot}`;
    const known = measured.get(key);
    if (known) return known;
    if (open.has(key)) return NOTHING;
    open.add(key);
    const tally = selectionTally(type, fragment.selectionSet, atRoot);
    open.delete(key);
    measured.set(key, tally);
    return tally;
  };

  const selectionTally = (parent: GraphQLCompositeType, selectionSet: SelectionSetNode, atRoot: boolean): Tally => {
    let cost = 0;
    let aliases = 0;
    let aliasedCost = 0;
    for (const selection of selectionSet.selections) {
      budget.visit();
      let tally: Tally;
      if (selection.kind === Kind.FIELD) tally = fieldTally(parent, selection, atRoot);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition
          ? (schema.getType(selection.typeCondition.name.value) as GraphQLCompositeType | undefined)
          : parent;
        tally = selectionTally(type ?? parent, selection.selectionSet, atRoot);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (!fragment) continue; // graphql-js reports the unknown fragment
        tally = fragmentTally(parent, fragment, atRoot);
      }
      cost = saturatingAdd(cost, tally.cost);
      aliases = saturatingAdd(aliases, tally.aliases);
      aliasedCost = saturatingAdd(aliasedCost, tally.aliasedCost);
    }
    return { cost, aliases, aliasedCost };
  };

  let tally: Tally;
  try {
    tally = selectionTally(rootType, operation.selectionSet, true);
  } catch (error) {
    if (error instanceof WalkOverBudget) return new AppError("QUERY_TOO_COMPLEX", error.message);
    throw error;
  }
  const { cost, aliases, aliasedCost } = tally;
  const { maxAliasedCost } = limits;
  const problem =
    listProblem ??
    (aliases > limits.maxAliases
      ? `The operation uses ${countText(aliases)} aliases; at most ${limits.maxAliases} are allowed`
      : undefined) ??
    (maxAliasedCost !== undefined && aliasedCost > maxAliasedCost
      ? `The operation's aliased fields would cost ${countText(aliasedCost)} (each with what it selects, lists counted by their size); at most ${maxAliasedCost} is allowed`
      : undefined) ??
    (cost > limits.maxCost
      ? `The operation would cost ${countText(cost)} (fields, with lists counted by their size); at most ${limits.maxCost} is allowed`
      : undefined);
  if (!problem) return undefined;
  return new AppError("QUERY_TOO_COMPLEX", limits.appliesTo ? `${problem} ${limits.appliesTo}` : problem);
}
