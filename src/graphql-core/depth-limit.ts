import {
  type ASTNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from "graphql";
import { countText, createWalkBudget, saturatingAdd, WalkOverBudget } from "./walk-budget";

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

/** What the rule measures of a selection set, fragments expanded where they are spread. */
interface Measure {
  /** Nesting of the fields (outside introspection: data fields only). */
  readonly depth: number;
  /** `__schema` / `__type` fields selected outside introspection. */
  readonly introspectionFields: number;
  /** Fields selected inside introspection. */
  readonly introspectionSelections: number;
  /** Nesting of the deepest `__schema` / `__type` selection, counting that field. */
  readonly introspectionDepth: number;
}

const NOTHING: Measure = { depth: 0, introspectionFields: 0, introspectionSelections: 0, introspectionDepth: 0 };

/** The measure of selections side by side: depths are the deepest, counts add up. */
function alongside(a: Measure, b: Measure): Measure {
  return {
    depth: Math.max(a.depth, b.depth),
    introspectionFields: saturatingAdd(a.introspectionFields, b.introspectionFields),
    introspectionSelections: saturatingAdd(a.introspectionSelections, b.introspectionSelections),
    introspectionDepth: Math.max(a.introspectionDepth, b.introspectionDepth),
  };
}

/**
 * Measures the selection sets of one document. Each fragment is measured once per mode (inside
 * introspection or not) and its measure reused at every spread, so the work is linear in the
 * document however often fragments are spread; every selection visited spends the walk budget. A
 * fragment spread while it is being measured (a cycle, which graphql-js's NoFragmentCycles rule
 * reports in the same validation pass, possibly after this rule has run) counts as nothing.
 */
function measurerOf(document: DocumentNode): (selectionSet: SelectionSetNode) => Measure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const budget = createWalkBudget();
  const measured = { data: new Map<string, Measure>(), introspection: new Map<string, Measure>() };
  const open = { data: new Set<string>(), introspection: new Set<string>() };

  const fragmentMeasure = (name: string, mode: keyof typeof measured): Measure => {
    const known = measured[mode].get(name);
    if (known) return known;
    const fragment = fragments.get(name);
    if (!fragment || open[mode].has(name)) return NOTHING;
    open[mode].add(name);
    const measure = measureSet(fragment.selectionSet, mode);
    open[mode].delete(name);
    measured[mode].set(name, measure);
    return measure;
  };

  const measureSet = (selectionSet: SelectionSetNode, mode: keyof typeof measured): Measure => {
    let total = NOTHING;
    for (const selection of selectionSet.selections) {
      budget.visit();
      if (selection.kind === Kind.FIELD) {
        if (mode === "data" && isIntrospection(selection.name.value)) {
          const inside = selection.selectionSet ? measureSet(selection.selectionSet, "introspection") : NOTHING;
          total = alongside(total, {
            depth: 0,
            introspectionFields: 1,
            introspectionSelections: inside.introspectionSelections,
            introspectionDepth: 1 + inside.depth,
          });
        } else {
          const inside = selection.selectionSet ? measureSet(selection.selectionSet, mode) : NOTHING;
          total = alongside(total, {
            ...inside,
            depth: 1 + inside.depth,
            introspectionSelections: saturatingAdd(inside.introspectionSelections, mode === "introspection" ? 1 : 0),
          });
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        total = alongside(total, measureSet(selection.selectionSet, mode));
      } else total = alongside(total, fragmentMeasure(selection.name.value, mode));
    }
    return total;
  };

  return (selectionSet) => measureSet(selectionSet, "data");
}

/**
 * Rejects operations nested deeper than `maxDepth` fields (fragments followed, cycles cut), so that
 * an abusive query fails validation with QUERY_TOO_COMPLEX before any resolver runs. Introspection
 * is measured on its own: its standard query is deeper than any data query needs to be, so it has its
 * own depth bound, and the number of `__schema`/`__type` fields is bounded (aliases cannot repeat it).
 * A document with more selections to measure than the walk budget (walk-budget.ts) is refused too.
 */
export function depthLimit(maxDepth: number): ValidationRule {
  return (context: ValidationContext) => {
    const measure = measurerOf(context.getDocument());
    const tooComplex = (node: ASTNode, message: string) =>
      context.reportError(new GraphQLError(message, { nodes: [node], extensions: { code: "QUERY_TOO_COMPLEX" } }));
    return {
      OperationDefinition(node: ASTNode) {
        if (node.kind !== Kind.OPERATION_DEFINITION) return;
        let measured: Measure;
        try {
          measured = measure(node.selectionSet);
        } catch (error) {
          if (!(error instanceof WalkOverBudget)) throw error;
          tooComplex(node, error.message);
          return;
        }
        const { depth, introspectionFields, introspectionSelections, introspectionDepth } = measured;
        if (depth > maxDepth)
          tooComplex(node, `The operation is nested ${depth} levels deep; at most ${maxDepth} are allowed`);
        else if (introspectionFields > MAX_INTROSPECTION_FIELDS)
          tooComplex(
            node,
            `The operation selects __schema or __type ${countText(introspectionFields)} times; at most ${MAX_INTROSPECTION_FIELDS} are allowed`,
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
