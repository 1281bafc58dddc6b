import { type DocumentNode, type FieldNode, type FragmentDefinitionNode, Kind, type SelectionSetNode } from "graphql";
import { AppError } from "../errors";
import { createWalkBudget, WalkOverBudget, type WalkBudget } from "./walk-budget";

/**
 * Pairs of fields sharing a response name that one document may make validation compare. graphql-js's
 * OverlappingFieldsCanBeMerged rule compares every such pair in a selection set (fragments and inline
 * fragments merged in), then their sub-selections merged, so `{ health{status} health{status} … }`
 * costs the square of its repeats, within GRAPHQL_MAX_TOKENS too (BENCHMARKS.md, "Costs behind the
 * GraphQL bounds"). Legitimate documents repeat a name a handful of times.
 */
export const MAX_FIELD_COMPARISONS = 2_500;

/**
 * An upper estimate of the pairs validation will compare, or QUERY_TOO_COMPLEX past the bound (or
 * past the walk budget: fragments are expanded where they are spread, each once per selection set,
 * as the rule collects them). Runs before validation, which must not see such a document.
 */
export function checkFieldComparisons(document: DocumentNode, max = MAX_FIELD_COMPARISONS): void {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const budget = createWalkBudget();
  let comparisons = 0;
  const refuse = () =>
    new AppError(
      "QUERY_TOO_COMPLEX",
      `The document repeats fields under one name too often: validating it would compare more than ${max} pairs of fields`,
    );
  const compare = (groups: Map<string, FieldNode[]>): void => {
    for (const fields of groups.values()) {
      // graphql-js 16.15 settles a pair of plain leaves (no arguments, directives or selections) at
      // once: only pairs with at least one other field are counted, so `__typename` or `code` in
      // many colocated fragments costs nothing here.
      const plain = fields.filter(isPlainLeaf).length;
      comparisons += pairs(fields.length) - pairs(plain);
      if (comparisons > max) throw refuse();
      const children = new Map<string, FieldNode[]>();
      for (const field of fields) if (field.selectionSet) collect(field.selectionSet, children, new Set(), budget);
      if (children.size > 0) compare(children);
    }
  };
  const collect = (
    set: SelectionSetNode,
    into: Map<string, FieldNode[]>,
    spread: Set<string>,
    walk: WalkBudget,
  ): void => {
    for (const selection of set.selections) {
      walk.visit();
      if (selection.kind === Kind.FIELD) {
        const name = selection.alias?.value ?? selection.name.value;
        const group = into.get(name);
        if (group) group.push(selection);
        else into.set(name, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet, into, spread, walk);
      else {
        // Each fragment once per merged selection set (as the rule does), which also cuts cycles.
        const fragment = fragments.get(selection.name.value);
        if (!fragment || spread.has(fragment.name.value)) continue;
        spread.add(fragment.name.value);
        collect(fragment.selectionSet, into, spread, walk);
      }
    }
  };
  try {
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION && definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
      const groups = new Map<string, FieldNode[]>();
      collect(definition.selectionSet, groups, new Set(), budget);
      compare(groups);
    }
  } catch (error) {
    if (error instanceof WalkOverBudget) throw refuse();
    throw error;
  }
}

const pairs = (n: number): number => (n * (n - 1)) / 2;

function isPlainLeaf(field: FieldNode): boolean {
  return !field.selectionSet && !field.arguments?.length && !field.directives?.length;
}

/**
 * The longest document text read (characters). Whitespace and comments are no tokens, so
 * GRAPHQL_MAX_TOKENS does not bound a text's length; and graphql-js locates each validation error
 * (up to 100 of them) by scanning the text from its start, so a long text makes every error costly.
 * The largest legitimate documents (1,000 station codes written out) fit.
 */
export const MAX_DOCUMENT_CHARS = 16_384;

/** QUERY_TOO_COMPLEX for a text longer than MAX_DOCUMENT_CHARS, before it is parsed. */
export function checkDocumentLength(text: string): void {
  if (text.length > MAX_DOCUMENT_CHARS)
    throw new AppError(
      "QUERY_TOO_COMPLEX",
      `The document has ${text.length} characters; at most ${MAX_DOCUMENT_CHARS} are read`,
    );
}
