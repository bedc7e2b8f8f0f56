/**
 * A doubly linked list, for members a long-lived owner adds and removes on every call, in place of a
 * Set (or a Map entry deleted and set again to move it). V8 gives a Map or Set a new hash table as
 * entries come and go, and the table it replaced keeps its entries and a link to the new table. Once a
 * replaced table is in the old generation, it keeps every later table, and every value their entries
 * held, alive through the scavenges until the next full collection: the young generation promotes them
 * all (bench/RESULTS.md, eighth round). A link is one object, unlinked in O(1) and cleared when it leaves.
 */
export interface Link<T> {
  value: T | undefined;
  previous: Link<T> | undefined;
  next: Link<T> | undefined;
}

export class LinkedList<T> {
  #head: Link<T> | undefined = undefined;
  #tail: Link<T> | undefined = undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The link added first (or moved to the end longest ago). */
  get first(): Link<T> | undefined {
    return this.#head;
  }

  /** Adds `value` at the end; the link is what `remove` and `moveToEnd` take. */
  push(value: T): Link<T> {
    const link: Link<T> = { value, previous: this.#tail, next: undefined };
    this.#append(link);
    this.#size += 1;
    return link;
  }

  moveToEnd(link: Link<T>): void {
    if (this.#tail === link || !this.#holds(link)) return;
    this.#unlink(link);
    link.previous = this.#tail;
    this.#append(link);
  }

  /** Removes a link of this list; a link already removed (or cleared) is left as it is. */
  remove(link: Link<T>): void {
    if (!this.#holds(link)) return;
    this.#unlink(link);
    link.value = undefined;
    this.#size -= 1;
  }

  /** The values, first to last. */
  values(): T[] {
    const values: T[] = [];
    for (let link = this.#head; link !== undefined; link = link.next) values.push(link.value as T);
    return values;
  }

  clear(): void {
    for (let link = this.#head; link !== undefined; ) {
      const next = link.next;
      link.value = undefined;
      link.previous = undefined;
      link.next = undefined;
      link = next;
    }
    this.#head = undefined;
    this.#tail = undefined;
    this.#size = 0;
  }

  /** Only the head has no previous link: a removed link has neither, and is not the head. */
  #holds(link: Link<T>): boolean {
    return link.previous !== undefined || this.#head === link;
  }

  #append(link: Link<T>): void {
    if (this.#tail === undefined) this.#head = link;
    else this.#tail.next = link;
    this.#tail = link;
  }

  #unlink(link: Link<T>): void {
    const { previous, next } = link;
    if (previous === undefined) this.#head = next;
    else previous.next = next;
    if (next === undefined) this.#tail = previous;
    else next.previous = previous;
    link.previous = undefined;
    link.next = undefined;
  }
}
