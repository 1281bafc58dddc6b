import {
  type ASTNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  OperationTypeNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from "graphql";

const isCondition = (name: string) => name === "skip" || name === "include";

/**
 * The first selection of a subscription operation's root selection set (fragments followed) that
 * carries @skip or @include, per operation. The GraphQL specification forbids them there (graphql-js 17
 * reports it): a subscription's one root field must be known without variables. graphql-js 16 does
 * not: a literal condition that skips the field makes execution fail inside (no root field), and a
 * variable makes graphql-js's own SingleFieldSubscriptionsRule throw during validation. Each
 * fragment is looked into once.
 */
function conditionalRoots(document: DocumentNode): Array<{ name: string | undefined; node: ASTNode }> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const looked = new Map<string, ASTNode | undefined>();
  const conditionIn = (selectionSet: SelectionSetNode): ASTNode | undefined => {
    for (const selection of selectionSet.selections) {
      if (selection.directives?.some((directive) => isCondition(directive.name.value))) return selection;
      let found: ASTNode | undefined;
      if (selection.kind === Kind.INLINE_FRAGMENT) found = conditionIn(selection.selectionSet);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        if (!looked.has(name)) {
          looked.set(name, undefined); // a cycle ends here (graphql-js reports it)
          const fragment = fragments.get(name);
          looked.set(name, fragment ? conditionIn(fragment.selectionSet) : undefined);
        }
        found = looked.get(name);
      }
      if (found) return found;
    }
    return undefined;
  };
  const found: Array<{ name: string | undefined; node: ASTNode }> = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION || definition.operation !== OperationTypeNode.SUBSCRIPTION)
      continue;
    const node = conditionIn(definition.selectionSet);
    if (node) found.push({ name: definition.name?.value, node });
  }
  return found;
}

/** Reports @skip and @include in a subscription's root selections (see `conditionalRoots`). */
export const noConditionalSubscriptionRoot: ValidationRule = (context: ValidationContext) => ({
  Document(document) {
    for (const { name, node } of conditionalRoots(document))
      context.reportError(
        new GraphQLError(
          `Subscription ${name === undefined ? "" : `"${name}" `}must not use @skip or @include in its top-level selection`,
          { nodes: [node] },
        ),
      );
  },
});
