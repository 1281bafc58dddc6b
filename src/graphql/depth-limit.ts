import { type ASTNode, type FragmentDefinitionNode, GraphQLError, Kind, type SelectionSetNode, type ValidationContext, type ValidationRule } from "graphql";

/** Deepest field nesting an operation may have (the deepest legitimate station query is 6). */
export const MAX_QUERY_DEPTH = 12;

/**
 * Rejects operations nested deeper than `maxDepth` fields (fragments followed, cycles cut), so that
 * an abusive query fails validation with QUERY_TOO_COMPLEX before any resolver runs.
 */
export function depthLimit(maxDepth = MAX_QUERY_DEPTH): ValidationRule {
  return (context: ValidationContext) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    const depthOf = (selectionSet: SelectionSetNode | undefined, seen: Set<string>): number => {
      if (!selectionSet) return 0;
      let deepest = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) deepest = Math.max(deepest, selection.selectionSet ? 1 + depthOf(selection.selectionSet, seen) : 1);
        else if (selection.kind === Kind.INLINE_FRAGMENT) deepest = Math.max(deepest, depthOf(selection.selectionSet, seen));
        else {
          const name = selection.name.value;
          const fragment = fragments.get(name);
          if (fragment && !seen.has(name)) deepest = Math.max(deepest, depthOf(fragment.selectionSet, new Set([...seen, name])));
        }
        if (deepest > maxDepth) return deepest;
      }
      return deepest;
    };
    return {
      OperationDefinition(node: ASTNode) {
        if (node.kind !== Kind.OPERATION_DEFINITION) return;
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > maxDepth) {
          context.reportError(new GraphQLError(`The operation is nested ${depth} levels deep; at most ${maxDepth} are allowed`, { nodes: [node], extensions: { code: "QUERY_TOO_COMPLEX" } }));
        }
      },
    };
  };
}
