import cargo from "../vocabulary/cargo.json";

const classes = cargo.classes as Record<string, { superClasses: string[] }>;
const cache = new Map<string, readonly string[]>();

function withSuperClasses(iri: string): readonly string[] {
  const cached = cache.get(iri);
  if (cached) return cached;
  const all = new Set<string>([iri]);
  const queue = [iri];
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const parent of classes[next]?.superClasses ?? [])
      if (!all.has(parent)) {
        all.add(parent);
        queue.push(parent);
      }
  const result = [...all].sort();
  cache.set(iri, result);
  return result;
}

/**
 * The classes an object with these stated classes is of, by the cargo ontology (3.3): each stated
 * class and its superclasses. A LOGISTICS_OBJECT_TYPE subscription to cargo:LogisticsObject is told
 * of every object it may read; one to cargo:Shipment of Shipments. Sorted, each once.
 */
export function classesOf(types: readonly string[]): string[] {
  return [...new Set(types.flatMap(withSuperClasses))].sort();
}
