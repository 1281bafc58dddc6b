import {
  type ASTNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from "graphql";

/** Deepest field nesting an operation may have (the deepest legitimate station query is 6). */
export const MAX_QUERY_DEPTH = 12;

/**
 * How deep an introspection selection (under `__schema` or `__type`) may go. graphql-js's
 * `getIntrospectionQuery()` — what GraphiQL, codegen tools and Postman send — reaches 14 with all its
 * options (its type-reference fragment nests `ofType` 8 times); the margin is for clients that nest a
 * little deeper, not for unbounded `ofType` chains.
 */
export const MAX_INTROSPECTION_DEPTH = 20;
/** `__schema` / `__type` fields one operation may select: one schema is the same answer however often asked. */
export const MAX_INTROSPECTION_FIELDS = 5;
/**
 * Field selections inside introspection, counted with every fragment spread expanded where it is
 * used: what bounds the answer's size (the cost and alias limits look at data fields only). The
 * standard query with every option stays well within it (tested).
 */
export const MAX_INTROSPECTION_SELECTIONS = 1_000;

const isIntrospection = (name: string) => name === "__schema" || name === "__type";

/**
 * Rejects operations nested deeper than `maxDepth` fields (fragments followed, cycles cut), so that
 * an abusive query fails validation with QUERY_TOO_COMPLEX before any resolver runs. Introspection
 * is measured on its own: its standard query is deeper than any data query needs to be, so it has its
 * own depth bound, and the number of `__schema`/`__type` fields is bounded (aliases cannot repeat it).
 */
export function depthLimit(maxDepth = MAX_QUERY_DEPTH): ValidationRule {
  return (context: ValidationContext) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    let introspectionFields = 0;
    let introspectionDepth = 0;
    let introspectionSelections = 0;
    const overBudget = () =>
      introspectionFields > MAX_INTROSPECTION_FIELDS || introspectionSelections > MAX_INTROSPECTION_SELECTIONS;
    /** Depth of the data fields; introspection subtrees are measured into `introspectionDepth` instead. */
    const depthOf = (
      selectionSet: SelectionSetNode | undefined,
      seen: Set<string>,
      inIntrospection: boolean,
      limit: number,
    ): number => {
      if (!selectionSet) return 0;
      let deepest = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          if (inIntrospection) introspectionSelections++;
          if (!inIntrospection && isIntrospection(selection.name.value)) {
            introspectionFields++;
            introspectionDepth = Math.max(
              introspectionDepth,
              selection.selectionSet ? 1 + depthOf(selection.selectionSet, seen, true, MAX_INTROSPECTION_DEPTH) : 1,
            );
            continue;
          }
          deepest = Math.max(
            deepest,
            selection.selectionSet ? 1 + depthOf(selection.selectionSet, seen, inIntrospection, limit) : 1,
          );
        } else if (selection.kind === Kind.INLINE_FRAGMENT)
          deepest = Math.max(deepest, depthOf(selection.selectionSet, seen, inIntrospection, limit));
        else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (fragment && !seen.has(name))
            deepest = Math.max(
              deepest,
              depthOf(fragment.selectionSet, new Set([...seen, name]), inIntrospection, limit),
            );
        }
        // Stop at the first excess: an abusive document can spread fragments into far more than this.
        if (deepest > limit || overBudget()) return deepest;
      }
      return deepest;
    };
    const tooComplex = (node: ASTNode, message: string) =>
      context.reportError(new GraphQLError(message, { nodes: [node], extensions: { code: "QUERY_TOO_COMPLEX" } }));
    return {
      OperationDefinition(node: ASTNode) {
        if (node.kind !== Kind.OPERATION_DEFINITION) return;
        introspectionFields = 0;
        introspectionDepth = 0;
        introspectionSelections = 0;
        const depth = depthOf(node.selectionSet, new Set(), false, maxDepth);
        if (depth > maxDepth)
          tooComplex(node, `The operation is nested ${depth} levels deep; at most ${maxDepth} are allowed`);
        else if (introspectionFields > MAX_INTROSPECTION_FIELDS)
          tooComplex(
            node,
            `The operation selects __schema or __type ${introspectionFields} times; at most ${MAX_INTROSPECTION_FIELDS} are allowed`,
          );
        else if (introspectionSelections > MAX_INTROSPECTION_SELECTIONS)
          tooComplex(
            node,
            `The introspection selects more than ${MAX_INTROSPECTION_SELECTIONS} fields (fragments counted where they are spread)`,
          );
        else if (introspectionDepth > MAX_INTROSPECTION_DEPTH)
          tooComplex(
            node,
            `The introspection is nested ${introspectionDepth} levels deep; at most ${MAX_INTROSPECTION_DEPTH} are allowed`,
          );
      },
    };
  };
}
