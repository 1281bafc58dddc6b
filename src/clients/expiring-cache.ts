/**
 * Values remembered for `ttlMs`, at most `maxEntries` of them (past that it starts again empty).
 * `forget` is for a change the cache must reflect at once: it also voids the reads under way, since
 * a read that started before the change may have seen the old row.
 */
export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly until: number }>();
  /** Bumped by every `forget`; a read's mark is the generation it started in. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The value remembered for `key`, unless it expired. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.until > this.now() ? entry.value : undefined;
  }

  /** Taken before a read: `remember` keeps the read's answer only if nothing was forgotten since. */
  mark(): number {
    return this.generation;
  }

  /** Remembers `value` unless a `forget` came after `mark`; says whether it did. */
  remember(key: K, value: V, mark: number): boolean {
    if (mark !== this.generation) return false;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
    return true;
  }

  /** Drops what is remembered for `key`; reads under way are not affected. */
  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops `key` (every key when none is given) and voids every read under way. */
  forget(key?: K): void {
    this.generation++;
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }
}
