import type { Db } from 'mongodb';

import { outsideUnit } from './session.js';

interface Generation {
  _id: string;
  generation: number;
}

/**
 * A read-through cache for data that changes rarely and is read on every token
 * request (applications, API resources). A write in this process clears it at once,
 * so the next request here sees the change. Other processes learn of the write from
 * a generation counter in the database that each process polls every `refreshMs`
 * (MongoDB change streams would push it, but not every engine has them).
 */
export class KeyedCache<V> {
  readonly name: string;
  readonly #entries = new Map<string, V | undefined>();
  readonly #load: (key: string) => Promise<V | undefined>;
  readonly #maxEntries: number;
  readonly #keepMisses: boolean;
  /** Bumped on every invalidation, so a load that raced a write does not store what it read before it. */
  #epoch = 0;

  constructor(name: string, load: (key: string) => Promise<V | undefined>, { maxEntries = 10_000, keepMisses = false } = {}) {
    this.name = name;
    this.#load = load;
    this.#maxEntries = maxEntries;
    this.#keepMisses = keepMisses;
  }

  async get(key: string): Promise<V | undefined> {
    if (this.#entries.has(key)) return this.#entries.get(key);
    const epoch = this.#epoch;
    // Read outside any unit of work: a cache must not keep what a transaction saw before it committed (or rolled back).
    const value = await outsideUnit(() => this.#load(key));
    // Misses are kept only where we choose the keys: anyone can ask for random client ids,
    // and they must not fill memory; but "no customizer configured" is asked on every token.
    if ((value !== undefined || this.#keepMisses) && epoch === this.#epoch) {
      if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(key, value);
    }
    return value;
  }

  clear(): void {
    this.#epoch += 1;
    this.#entries.clear();
  }
}

export class CacheRegistry {
  readonly #db: Db;
  /** The caches cleared by each name's changes (one name may cover several views of the same data). */
  readonly #caches = new Map<string, Array<KeyedCache<unknown>>>();
  readonly #seen = new Map<string, number>();
  readonly #watchers = new Map<string, Array<() => void>>();
  #polled = false;
  readonly #refreshMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Db, refreshMs: number) {
    this.#db = db;
    this.#refreshMs = refreshMs;
  }

  create<V>(name: string, load: (key: string) => Promise<V | undefined>, options: { keepMisses?: boolean } = {}): KeyedCache<V> {
    const cache = new KeyedCache<V>(name, load, options);
    this.#caches.set(name, [...(this.#caches.get(name) ?? []), cache as KeyedCache<unknown>]);
    return cache;
  }

  /**
   * Records that `name`'s data changed: this process forgets it now, the others at their
   * next poll. Call it after the change committed, or a load in between would cache the old data.
   */
  async changed(name: string): Promise<void> {
    this.#clear(name);
    await this.#db.collection<Generation>('cache_generations').updateOne({ _id: name }, { $inc: { generation: 1 } }, { upsert: true });
  }

  async poll(): Promise<void> {
    const generations = await this.#db.collection<Generation>('cache_generations').find({}).toArray();
    const first = !this.#polled;
    this.#polled = true;
    for (const { _id, generation } of generations) {
      const seen = this.#seen.get(_id);
      // After the first poll, a generation not seen before is a first change made since: it counts.
      if (!first && seen !== generation) {
        this.#clear(_id);
        for (const watcher of this.#watchers.get(_id) ?? []) watcher();
      }
      this.#seen.set(_id, generation);
    }
  }

  /** Forgets everything (a failed poll: better a slower request than a stale permission). */
  clearAll(): void {
    for (const name of this.#caches.keys()) this.#clear(name);
  }

  #clear(name: string): void {
    for (const cache of this.#caches.get(name) ?? []) cache.clear();
  }

  /** Calls `watcher` when another process records a change to `name` (data kept outside a cache). */
  watch(name: string, watcher: () => void): void {
    this.#watchers.set(name, [...(this.#watchers.get(name) ?? []), watcher]);
  }

  async start(): Promise<void> {
    await this.poll();
    const tick = () => {
      this.poll()
        .catch(() => this.clearAll())
        .finally(() => {
          if (this.#timer) this.#timer = setTimeout(tick, this.#refreshMs).unref();
        });
    };
    this.#timer = setTimeout(tick, this.#refreshMs).unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
